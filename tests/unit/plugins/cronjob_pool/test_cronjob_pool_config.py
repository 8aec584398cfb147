"""CronJobPool args through the config loader: defaults, the seed's file, and every field's bad values
named with their path and what is valid."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubesched.config import ConfigError, load, loads
from kubesched.framework.fields import label_value_problem, qualified_name_problem
from kubesched.plugins.cronjob_pool.config import parse_args, typed, validate
from kubesched.plugins.cronjob_pool.plugin import new_cronjob_pool
from kubesched.plugins.helper.label_selector import label_key_problems, label_value_problems
from tests.paths import REPO as REPO_ROOT

REPO = REPO_ROOT
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
ARGS_PATH = "profiles[0].pluginConfig[0].args"


def config_with(args: Any) -> str:
    doc = {"profiles": [{"schedulerName": "s",
                         "plugins": {"multiPoint": {"enabled": [{"name": "CronJobPool"}]}},
                         "pluginConfig": [{"name": "CronJobPool", "args": args}]}]}
    return HEAD + yaml.safe_dump(doc)


def pool_args(**fields: Any) -> dict[str, Any]:
    return {"pools": [{"name": "cronjob", **fields}]}


DEFAULT_POOL = {
    "name": "cronjob",
    "pods": {"ownerKinds": ["Job", "CronJob"]},
    "nodes": {"matchLabels": {"kubesched.io/pool": "cronjob"}},
    "taint": {"key": "kubesched.io/pool", "value": "cronjob", "effect": "NoSchedule"},
    "exclusive": True,
    "fallback": "never",
}


def test_enabled_without_args_is_the_default_cronjob_pool() -> None:
    config = loads(HEAD + "profiles:\n- schedulerName: s\n  plugins:\n    multiPoint:\n"
                          "      enabled: [{name: CronJobPool}]\n")
    args = config.profiles[0].plugin_args["CronJobPool"]
    assert args == {"excludedNodes": None, "ownerWaitSeconds": 30, "pools": [DEFAULT_POOL]}
    pools = typed(args)
    assert [p.name for p in pools.pools] == ["cronjob"]
    assert pools.pools[0].nodes.query() == "kubesched.io/pool=cronjob"


def test_node_query_is_the_selector_as_apimachinery_prints_it() -> None:
    """labels.Selector.String: requirements sorted by key, an In written `k in (v)`, values sorted."""
    args, errs = validate({"pools": [{"name": "p", "nodes": {
        "matchLabels": {"zone": "a"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["y", "x"]},
                             {"key": "gpu", "operator": "In", "values": ["t4"]},
                             {"key": "cordoned", "operator": "DoesNotExist"}]}}]})
    assert errs == []
    spec = typed(args).pools[0]
    assert spec.nodes.query() == "!cordoned,gpu in (t4),tier in (x,y),zone=a"
    assert spec.nodes.matches({"zone": "a", "tier": "x", "gpu": "t4"})
    assert not spec.nodes.matches({"zone": "a", "tier": "x", "gpu": "t4", "cordoned": ""})


def test_a_named_pool_gets_its_own_label_and_taint() -> None:
    parsed, errs = validate({"pools": [{"name": "batch"}]})
    assert not errs
    assert parsed["pools"][0]["nodes"] == {"matchLabels": {"kubesched.io/pool": "batch"}}
    assert parsed["pools"][0]["taint"]["value"] == "batch"


def test_default_config_loads() -> None:
    assert load(None).profiles[0].scheduler_name == "kubesched"


def test_seed_config_loads() -> None:
    config = load(str(REPO / "devtools/examples/config/seed.yaml"))
    assert not config.unimplemented
    profile = config.profiles[0]
    assert profile.scheduler_name == "my-custom-scheduler"
    filters = [p.name for p in profile.plugins["filter"]]
    assert filters.index("CronJobPool") < filters.index("TaintToleration")
    pools = typed(profile.plugin_args["CronJobPool"])
    assert pools.excluded_nodes is not None
    assert pools.excluded_nodes.matches({"tier": "control"})
    (pool,) = pools.pools
    assert pool.taint is None
    assert pool.pods.node_selector == (("tier", "cronjob"),)
    assert pool.pods.owner_kinds == ("Job", "CronJob")
    assert pool.nodes.matches({"tier": "cronjob"})
    assert not pool.nodes.matches({"tier": "normal"})


def test_seed_manifests_use_the_seed_configs_scheduler_name() -> None:
    seed = REPO / "devtools/examples/seed"
    docs = [d for f in sorted(seed.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text())]
    kinds = sorted(d["kind"] for d in docs)
    assert kinds == ["CronJob", "CronJob", "CronJob", "Deployment"]
    for d in docs:
        template = d["spec"]["jobTemplate"]["spec"]["template"] if d["kind"] == "CronJob" else d["spec"]["template"]
        assert template["spec"]["schedulerName"] == "my-custom-scheduler"
        if d["kind"] == "CronJob":
            assert d["spec"]["schedule"] == "*/2 * * * *"
            assert template["spec"]["nodeSelector"] == {"tier": "cronjob"}
            assert template["spec"]["containers"][0]["command"] == ["sleep", "20"]
        else:
            assert d["spec"]["replicas"] == 3


@pytest.mark.parametrize("args", [
    {},
    pool_args(),
    {"excludedNodes": {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["control"]}]},
     "ownerWaitSeconds": 0,
     "pools": [{"name": "a", "pods": {"selector": {"matchLabels": {"x": "y"}}, "nodeSelector": {"t": "a"}},
                "nodes": {"matchExpressions": [{"key": "pool", "operator": "Exists"}]}, "taint": None,
                "exclusive": False, "fallback": "general"},
               {"name": "b", "pods": {"ownerKinds": ["Job"]}}]},
], ids=["empty", "one-pool", "everything"])
def test_parsing_is_idempotent(args: dict[str, Any]) -> None:
    first, errs = validate(args)
    assert not errs
    again, errs = validate(first)
    assert not errs
    assert again == first


BAD = [
    ("pools", {"pools": {"name": "x"}}, 'pools: Invalid value: {"name": "x"}: must be a list'),
    ("pools-empty", {"pools": []}, "pools: Required value: at least one pool"),
    ("unknown-args-field", {"pool": []}, "pool: Unknown field (did you mean pools?): valid fields here are: "
                                         "excludedNodes, ownerWaitSeconds, pools"),
    ("owner-wait-negative", {"ownerWaitSeconds": -1}, "ownerWaitSeconds: Invalid value: -1: must be 0 or more"),
    ("owner-wait-duration", {"ownerWaitSeconds": "30s"}, 'ownerWaitSeconds: Invalid value: "30s": must be an integer'),
    ("pool-not-mapping", {"pools": ["cronjob"]}, 'pools[0]: Invalid value: "cronjob": must be a mapping'),
    ("name-missing", {"pools": [{}]}, "pools[0].name: Required value: each pool needs a name"),
    # `- name:` in YAML: a null name is a missing name, not an empty one the plugin trips over later.
    ("name-null", {"pools": [{"name": None}]}, "pools[0].name: Required value: each pool needs a name"),
    ("name-empty", pool_args(name=""), "pools[0].name: Required value: each pool needs a name"),
    ("name-not-string", pool_args(name=5), "pools[0].name: Invalid value: 5: must be a string"),
    ("pool-null", {"pools": [None]}, "pools[0].name: Required value: each pool needs a name"),
    ("name-not-dns", pool_args(name="Cron_Job"), 'pools[0].name: Invalid value: "Cron_Job": must be a DNS label'),
    ("name-none", pool_args(name="none"), 'pools[0].name: Invalid value: "none": is reserved'),
    ("name-duplicate", {"pools": [{"name": "a"}, {"name": "a"}]},
     'pools[1].name: Invalid value: "a": duplicate of pools[0].name'),
    ("unknown-pool-field", pool_args(fallbacks="never"),
     "pools[0].fallbacks: Unknown field (did you mean fallback?)"),
    ("pods-empty", pool_args(pods={}), "pools[0].pods: Required value: at least one of ownerKinds, selector, "
                                       "nodeSelector"),
    ("pods-unknown-field", pool_args(pods={"owners": ["Job"]}), "pools[0].pods.owners: Unknown field"),
    ("owner-kind-lowercase", pool_args(pods={"ownerKinds": ["job"]}),
     'pools[0].pods.ownerKinds[0]: Invalid value: "job": must be a resource kind such as Job or CronJob'),
    ("owner-kinds-not-through-job", pool_args(pods={"ownerKinds": ["ReplicaSet", "Deployment"]}),
     'pools[0].pods.ownerKinds: Invalid value: ["ReplicaSet", "Deployment"]: kubesched follows owners through '
     "Jobs only"),
    ("owner-kinds-too-long", pool_args(pods={"ownerKinds": ["Job", "CronJob", "Thing"]}),
     "pools[0].pods.ownerKinds: Invalid value: [\"Job\", \"CronJob\", \"Thing\"]"),
    ("owner-kinds-duplicate", pool_args(pods={"ownerKinds": ["Job", "Job"]}),
     'pools[0].pods.ownerKinds[1]: Duplicate value: "Job"'),
    ("owner-kind-not-string", pool_args(pods={"ownerKinds": [1]}),
     "pools[0].pods.ownerKinds[0]: Invalid value: 1: must be a string"),
    # After a non-string is dropped, a later item's error still names its own index.
    ("owner-kind-index-after-non-string", pool_args(pods={"ownerKinds": [1, "job"]}),
     'pools[0].pods.ownerKinds[1]: Invalid value: "job": must be a resource kind'),
    ("selector-value-index-after-non-string", pool_args(pods={"selector": {"matchExpressions": [
        {"key": "a", "operator": "In", "values": [1, "b c"]}]}}),
     'pools[0].pods.selector.matchExpressions[0].values[1]: Invalid value: "b c"'),
    ("owner-kinds-not-list", pool_args(pods={"ownerKinds": "Job"}),
     'pools[0].pods.ownerKinds: Invalid value: "Job": must be a list'),
    ("pod-selector-empty", pool_args(pods={"selector": {}}),
     "pools[0].pods.selector: Required value: matchLabels or matchExpressions (an empty selector would match "
     "all pods)"),
    ("pod-selector-bad-operator", pool_args(pods={"selector": {"matchExpressions": [
        {"key": "a", "operator": "Gt", "values": ["1"]}]}}),
     'pools[0].pods.selector.matchExpressions[0].operator: Unsupported value: "Gt": supported values: "In", '
     '"NotIn", "Exists", "DoesNotExist"'),
    ("pod-selector-in-without-values", pool_args(pods={"selector": {"matchExpressions": [
        {"key": "a", "operator": "In"}]}}),
     "pools[0].pods.selector.matchExpressions[0].values: Invalid value: []: for 'In', 'NotIn' operators, "
     "values set can't be empty"),
    ("pod-selector-exists-with-values", pool_args(pods={"selector": {"matchExpressions": [
        {"key": "a", "operator": "Exists", "values": ["x"]}]}}),
     "pools[0].pods.selector.matchExpressions[0].values: Invalid value: [\"x\"]: values set must be empty"),
    ("pod-selector-bad-key", pool_args(pods={"selector": {"matchExpressions": [
        {"key": "-a", "operator": "Exists"}]}}),
     'pools[0].pods.selector.matchExpressions[0].key: Invalid value: "-a": name part must consist of'),
    ("pod-selector-bad-value", pool_args(pods={"selector": {"matchLabels": {"a": "b c"}}}),
     'pools[0].pods.selector.matchLabels[a]: Invalid value: "b c": a valid label value must be'),
    ("node-selector-number", pool_args(pods={"nodeSelector": {"tier": 1}}),
     "pools[0].pods.nodeSelector[tier]: Invalid value: 1: must be a string (quote numbers and booleans)"),
    ("nodes-empty", pool_args(nodes={"matchLabels": {}}),
     "pools[0].nodes: Invalid value: {\"matchLabels\": {}}: an empty selector would match all nodes"),
    ("nodes-not-mapping", pool_args(nodes="tier=cronjob"),
     'pools[0].nodes: Invalid value: "tier=cronjob": must be a mapping'),
    ("taint-no-execute", pool_args(taint={"key": "k", "effect": "NoExecute"}),
     'pools[0].taint.effect: Unsupported value: "NoExecute": supported values: "NoSchedule" (kubesched '
     "tolerates the pool's taint in memory only"),
    ("taint-key-missing", pool_args(taint={"value": "v"}), "pools[0].taint.key: Required value"),
    ("taint-bad-key", pool_args(taint={"key": "a/b/c"}), 'pools[0].taint.key: Invalid value: "a/b/c"'),
    ("taint-bad-value", pool_args(taint={"key": "k", "value": "x y"}), 'pools[0].taint.value: Invalid value: "x y"'),
    ("taint-unknown-field", pool_args(taint={"key": "k", "operator": "Equal"}),
     "pools[0].taint.operator: Unknown field"),
    ("exclusive-string", pool_args(exclusive="yes"), 'pools[0].exclusive: Invalid value: "yes": must be true or false'),
    ("fallback-unknown", pool_args(fallback="sometimes"),
     'pools[0].fallback: Unsupported value: "sometimes": supported values: "never", "general"'),
    ("excluded-empty", {"excludedNodes": {}},
     "excludedNodes: Required value: matchLabels or matchExpressions (an empty selector would match all nodes)"),
    ("excluded-bad-label-value", {"excludedNodes": {"matchLabels": {"tier": True}}},
     "excludedNodes.matchLabels[tier]: Invalid value: true: must be a string"),
]


@pytest.mark.parametrize(("args", "error"), [pytest.param(a, err, id=i) for i, a, err in BAD])
def test_bad_values_are_named_with_their_path(args: Any, error: str) -> None:
    with pytest.raises(ConfigError) as info:
        loads(config_with(args))
    assert f"{ARGS_PATH}.{error}" in str(info.value)


@pytest.mark.parametrize("args", [
    pytest.param({"ownerWaitSeconds": None, "excludedNodes": None, "pools": None}, id="top-level-nulls"),
    pytest.param(pool_args(pods=None, nodes=None, exclusive=None, fallback=None), id="pool-field-nulls"),
    pytest.param(pool_args(taint={"key": "k", "value": None, "effect": None}), id="taint-field-nulls"),
    pytest.param(pool_args(pods={"ownerKinds": None,
                                 "selector": {"matchLabels": {"a": "b"}, "matchExpressions": None}}),
                 id="pods-field-nulls"),
    pytest.param(pool_args(taint=None), id="no-taint"),
])
def test_accepted_args_build_the_plugin(args: dict[str, Any]) -> None:
    # Start-up validates the loader's output again in the plugin's factory; whatever the loader
    # accepts must pass there too, or a config mistake surfaces as a ValueError traceback.
    profile = loads(config_with(args)).profiles[0]
    parsed = profile.plugin_args["CronJobPool"]
    assert validate(parsed)[1] == []
    new_cronjob_pool(parsed)


def test_args_of_the_wrong_kind() -> None:
    with pytest.raises(ConfigError, match=r'args\.kind: Invalid value: "NodeAffinityArgs": must be '
                                          r'"CronJobPoolArgs"'):
        loads(config_with({"kind": "NodeAffinityArgs"}))
    assert loads(config_with({"kind": "CronJobPoolArgs", "apiVersion": "kubescheduler.config.k8s.io/v1"}))


def test_every_error_is_reported_at_once() -> None:
    errs: list[Any] = []
    parse_args({"pools": [{"name": "A", "fallback": "x", "exclusive": 1}]}, "args", errs)
    assert sorted(e.path for e in errs) == ["args.pools[0].exclusive", "args.pools[0].fallback",
                                            "args.pools[0].name"]


@pytest.mark.parametrize(("selector", "paths"), [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
                 ["args.pools[0].pods.selector.matchExpressions[0].operator"], id="rejected-expression"),
    pytest.param({"matchLabels": {"a": 1}}, ["args.pools[0].pods.selector.matchLabels[a]"], id="rejected-label"),
    pytest.param({"matchLabels": {}}, ["args.pools[0].pods.selector"], id="written-empty"),
])
def test_a_rejected_selector_entry_is_one_error(selector: dict[str, Any], paths: list[str]) -> None:
    # Not also "an empty selector would match all pods": the selector was not written empty.
    assert [x.path for x in validate(pool_args(pods={"selector": selector}))[1]] == paths


@pytest.mark.parametrize("text", ["a", "A.b-c_d", "", "-a", "a-", "a b", "é", "a/b", "/a", "a/", "a/b/c",
                                  "Example.com/a", "example.com/a", "x" * 63, "x" * 64, "p/" + "x" * 63,
                                  "p/" + "x" * 64, "b" * 253 + "/x", "b" * 254 + "/x", "a..b/c", "a.-b/c"])
def test_pool_checks_accept_what_apimachinery_accepts(text: str) -> None:
    """The pool's own messages, apimachinery's rules: what passes validation parses in `typed`."""
    assert (qualified_name_problem(text) is None) == (not label_key_problems(text))
    assert (label_value_problem(text) is None) == (not label_value_problems(text))
