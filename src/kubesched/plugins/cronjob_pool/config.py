"""CronJobPool's args: reading, defaulting and validating `pluginConfig[].args`, and their typed form.

    excludedNodes: {matchLabels: {tier: control}}   # LabelSelector; these nodes get no pod at all
    ownerWaitSeconds: 30                            # how long a Job's pod waits for its Job to be seen
    pools:                                          # default: the one `cronjob` pool below
      - name: cronjob                               # DNS label; in reason texts and the pod annotation
        pods:                                       # any criterion that matches makes a pool pod
          ownerKinds: [Job, CronJob]                # controller chain from the pod up
          selector: {matchLabels: {...}}            # pod labels (LabelSelector)
          nodeSelector: {tier: cronjob}             # pods whose spec.nodeSelector holds these pairs
        nodes: {matchLabels: {kubesched.io/pool: cronjob}}
        taint: {key: kubesched.io/pool, value: cronjob, effect: NoSchedule}   # null: no taint
        exclusive: true
        fallback: never                             # never | general

`parse_args` has the config loader's ArgsParser signature and returns the defaulted args in the same
camelCase shape, so parsing its own output again gives the same result. The config loader imports it;
it imports the framework's field readers (kubesched.framework.fields) and the label-selector helper, never
kubesched.config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework import field_errors as e
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_bool,
    get_int,
    get_list,
    get_mapping,
    get_str,
    get_str_items,
    index,
    label_value_problem,
    qualified_name_problem,
)
from kubesched.model.objects import Taint
from kubesched.plugins.helper.label_selector import Selector, parse_dict

POOL_LABEL = "kubesched.io/pool"
DEFAULT_POOL = "cronjob"
DEFAULT_OWNER_KINDS = ("Job", "CronJob")
DEFAULT_OWNER_WAIT_SECONDS = 30
FALLBACKS = ("never", "general")
# The in-memory toleration never reaches the pod's spec, so a NoExecute pool taint would have the
# taint manager evict the very pods kubesched placed there; PreferNoSchedule keeps nobody out.
TAINT_EFFECTS = ("NoSchedule",)
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
# The pod annotation value that takes a pod out of every pool; so no pool may be called this.
NO_POOL = "none"

ARGS_FIELDS = ("excludedNodes", "ownerWaitSeconds", "pools")
POOL_FIELDS = ("name", "pods", "nodes", "taint", "exclusive", "fallback")
PODS_FIELDS = ("ownerKinds", "selector", "nodeSelector")
SELECTOR_FIELDS = ("matchLabels", "matchExpressions")
EXPRESSION_FIELDS = ("key", "operator", "values")
TAINT_FIELDS = ("key", "value", "effect")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_KIND = re.compile(r"^[A-Z][A-Za-z0-9]*$")


# --- typed form ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PodMatch:
    owner_kinds: tuple[str, ...]  # () when pods are not matched by owner
    selector: Selector | None
    node_selector: tuple[tuple[str, str], ...]  # () when not used

    def matches_labels_or_selector(self, labels: Mapping[str, str], node_selector: Mapping[str, str]) -> bool:
        if self.selector is not None and self.selector.matches(labels):
            return True
        return bool(self.node_selector) and all(node_selector.get(k) == v for k, v in self.node_selector)


@dataclass(frozen=True)
class PoolSpec:
    name: str
    pods: PodMatch
    nodes: Selector
    taint: Taint | None
    exclusive: bool
    fallback: str  # never | general


@dataclass(frozen=True)
class PoolArgs:
    pools: tuple[PoolSpec, ...]
    excluded_nodes: Selector | None
    owner_wait_seconds: int

    def pool(self, name: str) -> PoolSpec | None:
        return next((p for p in self.pools if p.name == name), None)


def default_pool(name: str = DEFAULT_POOL) -> dict[str, Any]:
    return {
        "name": name,
        "pods": {"ownerKinds": list(DEFAULT_OWNER_KINDS)},
        "nodes": {"matchLabels": {POOL_LABEL: name}},
        "taint": {"key": POOL_LABEL, "value": name, "effect": "NoSchedule"},
        "exclusive": True,
        "fallback": "never",
    }


def typed(args: Mapping[str, Any]) -> PoolArgs:
    """The typed form of args that `parse_args` returned (trusted: no checks here)."""
    pools = []
    for raw in args["pools"]:
        pods = raw["pods"]
        selector = pods.get("selector")
        taint = raw.get("taint")
        pools.append(PoolSpec(
            name=raw["name"],
            pods=PodMatch(tuple(pods.get("ownerKinds", ())),
                          parse_dict(selector) if selector is not None else None,
                          tuple(sorted(pods.get("nodeSelector", {}).items()))),
            nodes=parse_dict(raw["nodes"]),
            taint=Taint(key=taint["key"], value=taint.get("value", ""), effect=taint["effect"]) if taint else None,
            exclusive=raw["exclusive"],
            fallback=raw["fallback"],
        ))
    excluded = args.get("excludedNodes")
    return PoolArgs(tuple(pools), parse_dict(excluded) if excluded is not None else None,
                    args["ownerWaitSeconds"])


# --- reading and validation --------------------------------------------------------------------------

def parse_args(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    """CronJobPool's ArgsParser: the defaulted args; every bad field appended to errs with its path."""
    check_fields(raw, path, ARGS_FIELDS, errs)
    out: dict[str, Any] = {}
    excluded = _selector(raw, "excludedNodes", path, errs, what="nodes")
    out["excludedNodes"] = excluded
    wait = get_int(raw, "ownerWaitSeconds", path, errs)
    if wait is not None and wait < 0:
        errs.append(e.invalid(child(path, "ownerWaitSeconds"), wait, "must be 0 or more seconds"))
    out["ownerWaitSeconds"] = DEFAULT_OWNER_WAIT_SECONDS if wait is None or wait < 0 else wait
    pools_path = child(path, "pools")
    if raw.get("pools") is None:
        items: list[Any] = [{"name": DEFAULT_POOL}]
    else:
        items = get_list(raw, "pools", path, errs)
        if raw["pools"] == []:
            errs.append(e.required(pools_path, "at least one pool (leave `pools` out for the default "
                                               f"{DEFAULT_POOL!r} pool)"))
    pools: list[dict[str, Any]] = []
    first_with_name: dict[str, int] = {}
    for i, item in enumerate(items):
        p = index(pools_path, i)
        pool = _pool(item, p, errs)
        if pool is None:
            continue
        name = pool["name"]
        if name in first_with_name:
            errs.append(e.invalid(child(p, "name"), name, f"duplicate of pools[{first_with_name[name]}].name; "
                                                          "pool names must be unique"))
        else:
            first_with_name[name] = i
        pools.append(pool)
    out["pools"] = pools
    return out


def _pool(raw: Any, path: str, errs: Errors) -> dict[str, Any] | None:
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return None
    check_fields(obj, path, POOL_FIELDS, errs)
    reported = len(errs)
    name = get_str(obj, "name", path, errs)
    if not name:
        # Missing, null and "" are all no name (null is unset, as for Go's decoder); only a value
        # of the wrong type has been reported already.
        if len(errs) == reported:
            errs.append(e.required(child(path, "name"), "each pool needs a name (a DNS label such as "
                                                        f"{DEFAULT_POOL!r})"))
        name = ""
    elif name == NO_POOL:
        errs.append(e.invalid(child(path, "name"), name, f"is reserved: the annotation {POOL_LABEL}: {NO_POOL} "
                                                         "takes a pod out of every pool"))
    elif len(name) > 63 or not _DNS_LABEL.match(name):
        errs.append(e.invalid(child(path, "name"), name, "must be a DNS label: lowercase letters, digits and "
                                                         "'-', starting and ending with a letter or digit, "
                                                         "at most 63 characters"))
    out = default_pool(name)
    if obj.get("pods") is not None:
        out["pods"] = _pods(obj, path, errs)
    if obj.get("nodes") is not None:
        out["nodes"] = _selector(obj, "nodes", path, errs, what="nodes")
    if "taint" in obj:
        out["taint"] = _taint(obj, path, errs)
    exclusive = get_bool(obj, "exclusive", path, errs)
    if exclusive is not None:
        out["exclusive"] = exclusive
    fallback = get_str(obj, "fallback", path, errs)
    if fallback is not None:
        if fallback not in FALLBACKS:
            errs.append(e.unsupported(child(path, "fallback"), fallback, FALLBACKS,
                                      " (never: pool pods stay Pending when the pool has no room; "
                                      "general: they may use general nodes then)"))
        else:
            out["fallback"] = fallback
    return out


def _pods(obj: Mapping[str, Any], path: str, errs: Errors) -> dict[str, Any]:
    p = child(path, "pods")
    raw = get_mapping(obj, "pods", path, errs)
    if raw is None:
        return {"ownerKinds": list(DEFAULT_OWNER_KINDS)}
    check_fields(raw, p, PODS_FIELDS, errs)
    out: dict[str, Any] = {}
    items = get_str_items(raw, "ownerKinds", p, errs)
    kinds = [kind for _, kind in items]
    kinds_path = child(p, "ownerKinds")
    for n, (i, kind) in enumerate(items):
        if not _KIND.match(kind):
            errs.append(e.invalid(index(kinds_path, i), kind, "must be a resource kind such as Job or CronJob"))
        elif kind in kinds[:n]:
            errs.append(e.duplicate(index(kinds_path, i), kind))
    if len(kinds) > 2 or (len(kinds) == 2 and kinds[0] != "Job"):
        errs.append(e.invalid(kinds_path, kinds, "kubesched follows owners through Jobs only: use one kind "
                                                 "(the pod's controller, e.g. [Job]) or [Job, <kind>] "
                                                 "(e.g. [Job, CronJob])"))
    if kinds:
        out["ownerKinds"] = kinds
    selector = _selector(raw, "selector", p, errs, what="pods")
    if selector is not None:
        out["selector"] = selector
    node_selector = get_mapping(raw, "nodeSelector", p, errs)
    if node_selector is not None:
        out["nodeSelector"] = _label_map(node_selector, child(p, "nodeSelector"), errs)
        if not out["nodeSelector"]:
            del out["nodeSelector"]
    if not out:
        errs.append(e.required(p, "at least one of ownerKinds, selector, nodeSelector (leave `pods` out for "
                                  f"ownerKinds [{', '.join(DEFAULT_OWNER_KINDS)}])"))
    return out


def _selector(obj: Mapping[str, Any], key: str, path: str, errs: Errors, *, what: str) -> dict[str, Any] | None:
    """A LabelSelector; an empty one would select every object, which no caller here means. The key
    and value checks are kubesched's wording of apimachinery's rules (the same keys and values pass),
    so `typed` can build the helper's Selector from what passes."""
    p = child(path, key)
    raw = get_mapping(obj, key, path, errs)
    if raw is None:
        return None
    check_fields(raw, p, SELECTOR_FIELDS, errs)
    labels = _label_map(get_mapping(raw, "matchLabels", p, errs) or {}, child(p, "matchLabels"), errs)
    expressions = []
    for i, item in enumerate(get_list(raw, "matchExpressions", p, errs)):
        expr = _expression(item, index(child(p, "matchExpressions"), i), errs)
        if expr is not None:
            expressions.append(expr)
    if not labels and not expressions and "matchExpressions" not in raw and "matchLabels" not in raw:
        errs.append(e.required(p, f"matchLabels or matchExpressions (an empty selector would match all {what})"))
    elif not raw.get("matchLabels") and not raw.get("matchExpressions"):
        # Only a selector written empty: one whose entries were rejected already has its errors.
        errs.append(e.invalid(p, dict(raw), f"an empty selector would match all {what}"))
    out: dict[str, Any] = {}
    if labels:
        out["matchLabels"] = labels
    if expressions:
        out["matchExpressions"] = expressions
    return out


def _label_map(raw: Mapping[str, Any], path: str, errs: Errors) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in raw.items():
        p = f"{path}[{key}]"
        if not isinstance(key, str) or (problem := qualified_name_problem(key)):
            errs.append(e.invalid(p, key, f"a label key: {problem if isinstance(key, str) else 'must be a string'}"))
            continue
        if not isinstance(value, str):
            errs.append(e.wrong_type(p, value, "a string (quote numbers and booleans)"))
            continue
        if problem := label_value_problem(value):
            errs.append(e.invalid(p, value, problem))
            continue
        out[key] = value
    return out


def _expression(raw: Any, path: str, errs: Errors) -> dict[str, Any] | None:
    obj = as_mapping(raw, path, errs)
    if obj is None:
        return None
    check_fields(obj, path, EXPRESSION_FIELDS, errs)
    key = get_str(obj, "key", path, errs) or ""
    op = get_str(obj, "operator", path, errs) or ""
    items = get_str_items(obj, "values", path, errs)
    values = [v for _, v in items]
    ok = True
    if problem := qualified_name_problem(key):
        errs.append(e.invalid(child(path, "key"), key, problem))
        ok = False
    if op not in SELECTOR_OPERATORS:
        errs.append(e.unsupported(child(path, "operator"), op, SELECTOR_OPERATORS))
        return None
    values_path = child(path, "values")
    if op in ("In", "NotIn") and not values:
        errs.append(e.invalid(values_path, values, "for 'In', 'NotIn' operators, values set can't be empty"))
        ok = False
    elif op in ("Exists", "DoesNotExist") and values:
        errs.append(e.invalid(values_path, values, "values set must be empty for Exists and DoesNotExist"))
        ok = False
    for i, v in items:
        if problem := label_value_problem(v):
            errs.append(e.invalid(index(values_path, i), v, problem))
            ok = False
    if not ok:
        return None
    return {"key": key, "operator": op, "values": values} if values else {"key": key, "operator": op}


def _taint(obj: Mapping[str, Any], path: str, errs: Errors) -> dict[str, str] | None:
    """The pool's taint; an explicit null means the pool's nodes carry none."""
    p = child(path, "taint")
    raw = get_mapping(obj, "taint", path, errs)
    if raw is None:
        return None
    check_fields(raw, p, TAINT_FIELDS, errs)
    key = get_str(raw, "key", p, errs)
    value = get_str(raw, "value", p, errs) or ""
    effect = get_str(raw, "effect", p, errs)
    if not key:
        errs.append(e.required(child(p, "key"), "a taint key such as kubesched.io/pool (or `taint: null` for "
                                                "a pool without a taint)"))
    elif problem := qualified_name_problem(key):
        errs.append(e.invalid(child(p, "key"), key, problem))
    if problem := label_value_problem(value):
        errs.append(e.invalid(child(p, "value"), value, problem))
    if effect is None:
        effect = TAINT_EFFECTS[0]
    elif effect not in TAINT_EFFECTS:
        errs.append(e.unsupported(child(p, "effect"), effect, TAINT_EFFECTS,
                                  " (kubesched tolerates the pool's taint in memory only: a NoExecute taint "
                                  "would evict the pool's own pods, PreferNoSchedule keeps nobody out)"))
    return {"key": key or "", "value": value, "effect": effect}


def validate(args: Mapping[str, Any], path: str = "args") -> tuple[dict[str, Any], Sequence[e.FieldError]]:
    """parse_args outside the config loader (the plugin's factory, `kubesched pool`)."""
    errs: Errors = []
    return parse_args(args, path, errs), errs
