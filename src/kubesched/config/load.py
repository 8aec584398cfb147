"""Reading a KubeSchedulerConfiguration file (YAML or JSON) into a validated SchedulerConfig."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import yaml

from kubesched.config.extenders import parse_extenders
from kubesched.config.plugins import API_VERSION
from kubesched.config.profiles import Catalog, check_percentage, parse_profile
from kubesched.config.types import ClientConnection, LeaderElection, PluginRef, ProfileConfig, SchedulerConfig
from kubesched.framework import field_errors as e
from kubesched.framework.field_errors import ConfigError, FieldError
from kubesched.framework.fields import (
    Errors,
    as_mapping,
    check_fields,
    child,
    get_bool,
    get_duration,
    get_float,
    get_int,
    get_list,
    get_mapping,
    get_str,
    index,
)
from kubesched.framework.registry import Registry
from kubesched.plugins.registry import in_tree_registry

KIND = "KubeSchedulerConfiguration"
DEFAULT_SCHEDULER_NAME = "kubesched"
DEFAULT_SOURCE = "<default config>"

TOP_LEVEL_FIELDS = (
    "apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
    "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
    "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive",
)
# Valid kube-scheduler fields that change nothing in kubesched yet: named in the start-up warning.
UNIMPLEMENTED_TOP_LEVEL = ("parallelism", "delayCacheUntilActive")
LEADER_ELECTION_FIELDS = (
    "leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock", "resourceName",
    "resourceNamespace",
)
CLIENT_CONNECTION_FIELDS = ("kubeconfig", "acceptContentTypes", "contentType", "qps", "burst")
# kube-scheduler's default first: with it the binding and the event are written as protobuf (reads,
# patches and other writes stay JSON).
SUPPORTED_CONTENT_TYPES = ("application/vnd.kubernetes.protobuf", "application/json")


def load(
    path: str | None,
    *,
    scheduler_name_override: str | None = None,
    registry: Registry | None = None,
    gates: AbstractSet[str] = frozenset(),
) -> SchedulerConfig:
    """The configuration from the file at `path`, or kubesched's default one when `path` is None.

    `scheduler_name_override` (the CLI's --scheduler-name, passed only when given) renames the single
    profile; `registry` (default: the in-tree plugins) says which plugins exist, the extension points
    each implements and their args parsers; `gates` the feature gates on that add default plugins
    (GenericWorkload: GangScheduling). Raises ConfigError naming the file and every bad field.
    """
    if path is None:
        return from_dict(None, source=DEFAULT_SOURCE, scheduler_name_override=scheduler_name_override,
                         registry=registry, gates=gates)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigError(path, [FieldError("", f"cannot read the config file: {exc.strerror or exc}")]) from exc
    return loads(text, source=path, scheduler_name_override=scheduler_name_override,
                 registry=registry, gates=gates)


def loads(
    text: str,
    *,
    source: str = "<config>",
    scheduler_name_override: str | None = None,
    registry: Registry | None = None,
    gates: AbstractSet[str] = frozenset(),
) -> SchedulerConfig:
    """Like `load`, from the file's text; `source` names it in errors."""
    try:
        raw = yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        raise ConfigError(source, [FieldError("", f"cannot parse as YAML or JSON: {exc}")]) from exc
    if raw is None:
        raw = {}
    return from_dict(raw, source=source, scheduler_name_override=scheduler_name_override,
                     registry=registry, gates=gates)


def from_dict(
    raw: Any,
    *,
    source: str,
    scheduler_name_override: str | None = None,
    registry: Registry | None = None,
    gates: AbstractSet[str] = frozenset(),
) -> SchedulerConfig:
    """Validates and defaults an already-parsed document; `raw=None` means no file at all."""
    registry = registry if registry is not None else in_tree_registry()
    catalog = Catalog(registry.extension_points(), registry.args_parsers(), frozenset(gates))
    errs: Errors = []
    unimplemented: list[str] = []
    doc = as_mapping(raw, "", errs)
    if doc is None:
        raise ConfigError(source, [FieldError("", f"must be a {KIND} mapping, got {e.show(raw)}")])
    if raw is not None:
        _check_type(doc, errs)
    check_fields(doc, "", TOP_LEVEL_FIELDS, errs)
    for name in UNIMPLEMENTED_TOP_LEVEL:
        if doc.get(name) not in (None, [], {}):
            unimplemented.append(name)
    parallelism = get_int(doc, "parallelism", "", errs)
    if parallelism is not None and parallelism <= 0:
        errs.append(e.invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    get_bool(doc, "delayCacheUntilActive", "", errs)
    profiling = get_bool(doc, "enableProfiling", "", errs)
    profiling = True if profiling is None else profiling
    # contention profiling defaults to on only with profiling on, as kube-scheduler's defaulting
    contention = get_bool(doc, "enableContentionProfiling", "", errs)
    contention = profiling if contention is None else contention
    extenders = parse_extenders(doc, errs)

    percentage = check_percentage(doc, "", errs) or 0
    initial = get_int(doc, "podInitialBackoffSeconds", "", errs)
    maximum = get_int(doc, "podMaxBackoffSeconds", "", errs)
    initial = 1 if initial is None else initial
    maximum = 10 if maximum is None else maximum
    if initial <= 0:
        errs.append(e.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errs.append(e.invalid("podMaxBackoffSeconds", maximum,
                              "must be greater than or equal to podInitialBackoffSeconds"))

    config = SchedulerConfig(
        profiles=_profiles(doc, scheduler_name_override, catalog, errs, unimplemented),
        percentage_of_nodes_to_score=percentage,
        client_connection=_client_connection(doc, errs, unimplemented),
        pod_initial_backoff_seconds=float(initial),
        pod_max_backoff_seconds=float(maximum),
        leader_election=_leader_election(doc, errs),
        enable_profiling=profiling,
        enable_contention_profiling=contention,
        extenders=extenders,
        unimplemented=tuple(unimplemented),
    )
    if errs:
        raise ConfigError(source, errs)
    return config


def _check_type(doc: Mapping[str, Any], errs: Errors) -> None:
    version = doc.get("apiVersion")
    if version is None:
        errs.append(e.required("apiVersion", f'must be "{API_VERSION}"'))
    elif version != API_VERSION:
        errs.append(e.unsupported("apiVersion", version, (API_VERSION,),
                                  " (the v1beta versions were removed from kube-scheduler in 1.29)"))
    kind = doc.get("kind")
    if kind is None:
        errs.append(e.required("kind", f'must be "{KIND}"'))
    elif kind != KIND:
        errs.append(e.unsupported("kind", kind, (KIND,)))


def _profiles(
    doc: Mapping[str, Any], override: str | None, catalog: Catalog, errs: Errors, unimplemented: list[str]
) -> tuple[ProfileConfig, ...]:
    raw_profiles = get_list(doc, "profiles", "", errs) or [{}]
    if override is not None and len(raw_profiles) > 1:
        errs.append(e.invalid("profiles", f"{len(raw_profiles)} profiles",
                              "a scheduler name override (--scheduler-name) needs a single profile; "
                              "set profiles[i].schedulerName in the file instead"))
        override = None
    out: list[ProfileConfig] = []
    first_with_name: dict[str, int] = {}
    for i, item in enumerate(raw_profiles):
        path = index("profiles", i)
        obj = as_mapping(item, path, errs)
        if obj is None:
            continue
        name = get_str(obj, "schedulerName", path, errs)
        if override is not None:
            name = override
        elif name is None and len(raw_profiles) == 1:
            # kube-scheduler would claim "default-scheduler" here; kubesched never does so unasked
            name = DEFAULT_SCHEDULER_NAME
        if not name:
            errs.append(e.required(child(path, "schedulerName"), "each profile needs a scheduler name"))
            name = ""
        elif name in first_with_name:
            errs.append(e.invalid(child(path, "schedulerName"), name,
                                  f"duplicate of profiles[{first_with_name[name]}].schedulerName; "
                                  "scheduler names must be unique"))
        else:
            first_with_name[name] = i
        out.append(parse_profile(obj, path, name, catalog, errs, unimplemented))
    for i, profile in enumerate(out[1:], start=1):
        if profile.plugins["queueSort"] != out[0].plugins["queueSort"]:
            errs.append(e.invalid(child(index("profiles", i), "plugins.queueSort"),
                                  [p.name for p in profile.plugins["queueSort"]], "must be the same for all profiles"))
        sort = [p.name for p in out[0].plugins["queueSort"]]
        if sort and profile.plugin_args.get(sort[0]) != out[0].plugin_args.get(sort[0]):
            errs.append(e.invalid(child(index("profiles", i), "pluginConfig"), sort[0],
                                  "queueSort args must be the same for all profiles"))
    return tuple(out)


def _client_connection(doc: Mapping[str, Any], errs: Errors, unimplemented: list[str]) -> ClientConnection:
    path = "clientConnection"
    obj = get_mapping(doc, path, "", errs) or {}
    check_fields(obj, path, CLIENT_CONNECTION_FIELDS, errs)
    if get_str(obj, "acceptContentTypes", path, errs):
        unimplemented.append(child(path, "acceptContentTypes"))
    content_type = get_str(obj, "contentType", path, errs) or SUPPORTED_CONTENT_TYPES[0]
    if content_type not in SUPPORTED_CONTENT_TYPES:
        unimplemented.append(f"{child(path, 'contentType')} ({content_type}; kubesched uses "
                             f"{SUPPORTED_CONTENT_TYPES[0]})")
        content_type = SUPPORTED_CONTENT_TYPES[0]
    burst = get_int(obj, "burst", path, errs) or 0
    if burst < 0:
        errs.append(e.invalid(child(path, "burst"), burst, "must be non-negative"))
    # qps < 0 is valid: as in client-go, it turns client-side rate limiting off
    qps = get_float(obj, "qps", path, errs) or 0.0
    return ClientConnection(
        kubeconfig=get_str(obj, "kubeconfig", path, errs) or "",
        qps=qps or 50.0,
        burst=burst or 100,
        content_type=content_type,
    )


def _leader_election(doc: Mapping[str, Any], errs: Errors) -> LeaderElection:
    path = "leaderElection"
    before = len(errs)
    obj = get_mapping(doc, path, "", errs) or {}
    check_fields(obj, path, LEADER_ELECTION_FIELDS, errs)
    d = LeaderElection()
    elect = get_bool(obj, "leaderElect", path, errs)
    # a zero duration or empty name means "default" in kube-scheduler's defaulting
    out = LeaderElection(
        leader_elect=d.leader_elect if elect is None else elect,
        lease_duration_seconds=get_duration(obj, "leaseDuration", path, errs) or d.lease_duration_seconds,
        renew_deadline_seconds=get_duration(obj, "renewDeadline", path, errs) or d.renew_deadline_seconds,
        retry_period_seconds=get_duration(obj, "retryPeriod", path, errs) or d.retry_period_seconds,
        resource_lock=get_str(obj, "resourceLock", path, errs) or d.resource_lock,
        resource_name=get_str(obj, "resourceName", path, errs) or d.resource_name,
        resource_namespace=get_str(obj, "resourceNamespace", path, errs) or d.resource_namespace,
    )
    if len(errs) == before:  # a field that did not parse has been named already
        errs.extend(validate_leader_election(out))
    return out


# client-go's leaderelection.JitterFactor: a renewal round must leave room for a jittered retry.
JITTER_FACTOR = 1.2


def validate_leader_election(le: LeaderElection) -> list[FieldError]:
    """kube-scheduler's checks (component-base ValidateLeaderElectionConfiguration), plus the one that
    client-go's NewLeaderElector makes at start-up (renewDeadline > retryPeriod*JitterFactor): here it
    is a field error before anything starts, not a failure once running."""
    errs: list[FieldError] = []
    if not le.leader_elect:
        return errs
    path = "leaderElection"
    lease, renew, retry = le.lease_duration_seconds, le.renew_deadline_seconds, le.retry_period_seconds
    for name, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
        if value <= 0:
            errs.append(e.invalid(child(path, name), format_duration(value), "must be greater than zero"))
    if lease <= renew:
        errs.append(e.invalid(child(path, "leaseDuration"), format_duration(lease),
                              "must be greater than `renewDeadline`"))
    if retry > 0 and renew <= JITTER_FACTOR * retry:
        errs.append(e.invalid(child(path, "renewDeadline"), format_duration(renew),
                              f"must be greater than retryPeriod*JitterFactor ({format_duration(retry)} * "
                              f"{JITTER_FACTOR})"))
    if le.resource_lock != "leases":
        errs.append(e.unsupported(child(path, "resourceLock"), le.resource_lock, ("leases",),
                                  ' (resourceLock value must be "leases")'))
    for name, text in (("resourceName", le.resource_name), ("resourceNamespace", le.resource_namespace)):
        if not text:
            errs.append(e.required(child(path, name)))
    return errs


def override_leader_election(config: SchedulerConfig, source: str,
                             **flags: bool | float | str | None) -> SchedulerConfig:
    """`config` with the --leader-elect* flags that were given (not None) applied over the file's
    leaderElection, then validated, as kube-scheduler's ApplyLeaderElectionTo does. Keys are
    LeaderElection's field names. Raises ConfigError naming the fields."""
    given = {k: v for k, v in flags.items() if v is not None}
    if not given:
        return config
    le = dataclasses.replace(config.leader_election, **given)  # type: ignore[arg-type]
    errs = validate_leader_election(le)
    if errs:
        raise ConfigError(source, errs)
    return dataclasses.replace(config, leader_election=le)


def format_duration(seconds: float) -> str:
    """A Go duration string, as time.Duration.String() writes it ("15s", "1m30s", "500ms")."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    magnitude = abs(seconds)
    if magnitude < 1:
        return f"{sign}{magnitude * 1000:g}ms"
    hours, rest = divmod(magnitude, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:g}s"
    if hours:
        return f"{sign}{hours:g}h{minutes:g}m{text}"
    if minutes:
        return f"{sign}{minutes:g}m{text}"
    return sign + text


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects a key given twice, as kube-scheduler's strict decoder does."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in out:
            raise yaml.constructor.ConstructorError(
                "while reading a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark)
        out[key] = loader.construct_object(value_node, deep=True)
    return out


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def kube_scheduler_default_plugins() -> dict[str, tuple[PluginRef, ...]]:
    """kube-scheduler v1.37.2's default profile restricted to the plugins kubesched implements: kubesched's
    own default without the CronJob pool, for comparisons with kube-scheduler."""
    plugins = load(None).profiles[0].plugins
    return {point: tuple(p for p in refs if p.name != "CronJobPool") for point, refs in plugins.items() if refs}
