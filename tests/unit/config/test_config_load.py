"""Defaults, kube-scheduler's merge rules, unimplemented-field reporting, and real users' files."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import (
    EXTENSION_POINTS,
    ConfigError,
    FieldError,
    ProfileConfig,
    SchedulerConfig,
    kubesched_plugins,
    load,
    loads,
)
from kubesched.framework.field_errors import invalid
from kubesched.framework.registry import PluginSpec
from kubesched.plugins.registry import in_tree_registry
from tests.paths import REPO as REPO_ROOT

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
REPO = REPO_ROOT

DEFAULT_SCORE = [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
                 ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 2),
                 ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
# kube-scheduler's defaults with kubesched's CronJobPool before TaintToleration.
DEFAULT_FILTER = ["NodeName", "NodeUnschedulable", "CronJobPool", "TaintToleration", "NodeAffinity", "NodePorts",
                  "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                  "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]


def names(profile: ProfileConfig, point: str) -> list[str]:
    return [p.name for p in profile.plugins[point]]


# UnsupportedPodFields stands before VolumeBinding, VolumeZone, PodTopologySpread and InterPodAffinity;
# DynamicResources and NodeDeclaredFeatures come last, as in kube-scheduler.
DEFAULT_PREFILTER = [*DEFAULT_FILTER[:-6], "UnsupportedPodFields", *DEFAULT_FILTER[-6:]]
# CronJobPool's args when no pluginConfig gives any: the one `cronjob` pool.
DEFAULT_POOL_ARGS = {
    "excludedNodes": None,
    "ownerWaitSeconds": 30,
    "pools": [{"name": "cronjob", "pods": {"ownerKinds": ["Job", "CronJob"]},
               "nodes": {"matchLabels": {"kubesched.io/pool": "cronjob"}},
               "taint": {"key": "kubesched.io/pool", "value": "cronjob", "effect": "NoSchedule"},
               "exclusive": True, "fallback": "never"}],
}
# A plugin kubesched knows but does not enable by default (CronJobPool is a default now).
EXTRA = "Extra"
WITH_EXTRA = in_tree_registry().merged([PluginSpec(EXTRA, lambda args: None, {"preFilter", "filter"})])


def weights(profile: ProfileConfig) -> list[tuple[str, int]]:
    return [(p.name, p.weight) for p in profile.plugins["score"]]


def plugins_yaml(body: str) -> str:
    lines = "".join(f"      {line}\n" for line in body.strip("\n").splitlines())
    return HEAD + "profiles:\n  - schedulerName: s\n    plugins:\n" + lines


def test_no_file_gives_kube_schedulers_defaults_restricted_to_kubesched() -> None:
    config = load(None)
    assert len(config.profiles) == 1
    p = config.profiles[0]
    assert p.scheduler_name == "kubesched"
    assert set(p.plugins) == set(EXTENSION_POINTS)
    # DefaultPreemption holds a preemptor back while its victims are deleted (as in kube-scheduler).
    assert names(p, "preEnqueue") == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert names(p, "queueSort") == ["PrioritySort"]
    assert names(p, "preFilter") == DEFAULT_PREFILTER
    assert names(p, "filter") == DEFAULT_FILTER
    assert names(p, "preScore") == ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                                    "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"]
    assert weights(p) == DEFAULT_SCORE
    assert names(p, "bind") == ["DefaultBinder"]
    assert names(p, "postFilter") == ["DynamicResources", "DefaultPreemption"]
    assert names(p, "reserve") == names(p, "preBind") == ["VolumeBinding", "DynamicResources"]
    assert all(not p.plugins[x] for x in ("permit", "postBind"))
    assert p.plugin_args["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert p.plugin_args["NodeResourcesBalancedAllocation"] == {
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert p.plugin_args["NodeAffinity"] == {"addedAffinity": None}
    assert p.plugin_args["CronJobPool"] == DEFAULT_POOL_ARGS
    # args only for the plugins the profile runs
    assert p.plugin_args["UnsupportedPodFields"] == {"ignoredFields": []}
    assert p.plugin_args["PodTopologySpread"] == {"defaultConstraints": [], "defaultingType": "System"}
    assert p.plugin_args["InterPodAffinity"] == {"hardPodAffinityWeight": 1,
                                                 "ignorePreferredTermsOfExistingPods": False}
    assert p.plugin_args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}
    assert p.plugin_args["VolumeBinding"] == {"bindTimeoutSeconds": 600, "shape": [
        {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]}
    assert p.plugin_args["DynamicResources"] == {"filterTimeout": "10s", "bindingTimeout": "10m0s"}
    assert set(p.plugin_args) == {"CronJobPool", "DefaultPreemption", "DynamicResources", "InterPodAffinity",
                                  "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                                  "PodTopologySpread", "UnsupportedPodFields", "VolumeBinding"}
    assert p.percentage_of_nodes_to_score is None
    assert config.percentage_of_nodes_to_score == 0
    assert (config.client_connection.qps, config.client_connection.burst) == (50.0, 100)
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1.0, 10.0)
    assert config.unimplemented == ()


def test_scheduler_name_override() -> None:
    assert load(None, scheduler_name_override="batch").profiles[0].scheduler_name == "batch"
    text = HEAD + "profiles:\n  - schedulerName: mine\n"
    assert loads(text).profiles[0].scheduler_name == "mine"
    assert loads(text, scheduler_name_override="batch").profiles[0].scheduler_name == "batch"


def test_single_unnamed_profile_is_kubesched_not_default_scheduler() -> None:
    assert loads(HEAD).profiles[0].scheduler_name == "kubesched"
    assert loads(HEAD + "profiles:\n  - percentageOfNodesToScore: 30\n").profiles[0].scheduler_name == "kubesched"


def test_example_default_yaml_is_the_default_config() -> None:
    assert load(str(REPO / "examples/config/default.yaml")) == load(None)


def test_json_file(tmp_path: Path) -> None:
    path = tmp_path / "sched.json"
    path.write_text(json.dumps({
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": "j", "plugins": {"score": {"disabled": [{"name": "ImageLocality"}]}}}],
    }))
    p = load(str(path)).profiles[0]
    assert p.scheduler_name == "j"
    assert "ImageLocality" not in names(p, "score")


MERGE_CASES = [
    pytest.param("score:\n  enabled:\n    - name: ImageLocality\n      weight: 7",
                 "score", [("ImageLocality", 7), *DEFAULT_SCORE[:-1]], id="score-weight-override-moves-first"),
    pytest.param("multiPoint:\n  enabled:\n    - name: ImageLocality\n      weight: 7",
                 "score", [*DEFAULT_SCORE[:-1], ("ImageLocality", 7)], id="multipoint-weight-override-in-place"),
    pytest.param("multiPoint:\n  enabled:\n    - name: TaintToleration",
                 "score", [("TaintToleration", 1), *DEFAULT_SCORE[1:]], id="renamed-without-weight-is-1"),
    pytest.param("score:\n  enabled:\n    - name: TaintToleration\n      weight: 0",
                 "score", [("TaintToleration", 1), *DEFAULT_SCORE[1:]], id="weight-0-is-1"),
    pytest.param("score:\n  enabled:\n    - name: NodeAffinity\n      weight: 5\nmultiPoint:\n  enabled:\n"
                 "    - name: NodeAffinity\n      weight: 9",
                 "score", [("NodeAffinity", 5), ("TaintToleration", 3), *DEFAULT_SCORE[2:]],
                 id="score-weight-beats-multipoint"),
    pytest.param("score:\n  disabled:\n    - name: '*'", "score", [], id="score-disable-all"),
    pytest.param("score:\n  disabled:\n    - name: '*'\n  enabled:\n    - name: NodeResourcesFit\n      weight: 4",
                 "score", [("NodeResourcesFit", 4)], id="score-disable-all-enable-one"),
    pytest.param("multiPoint:\n  disabled:\n    - name: '*'\n  enabled:\n    - name: PrioritySort\n"
                 "    - name: DefaultBinder\n    - name: ImageLocality", "score", [("ImageLocality", 1)],
                 id="multipoint-disable-all"),
    pytest.param("score:\n  disabled:\n    - name: NodeAffinity", "score",
                 [("TaintToleration", 3), *DEFAULT_SCORE[2:]], id="disable-at-one-point"),
    pytest.param("score:\n  disabled:\n    - name: NodeAffinity", "filter", DEFAULT_FILTER,
                 id="disable-at-one-point-keeps-others"),
    pytest.param("multiPoint:\n  disabled:\n    - name: NodeAffinity", "filter",
                 [n for n in DEFAULT_FILTER if n != "NodeAffinity"], id="multipoint-disable-everywhere"),
    pytest.param(f"multiPoint:\n  enabled:\n    - name: {EXTRA}", "filter", [*DEFAULT_FILTER, EXTRA],
                 id="user-plugin-appended-after-defaults"),
    pytest.param(f"multiPoint:\n  enabled:\n    - name: {EXTRA}", "preFilter",
                 [*DEFAULT_PREFILTER, EXTRA], id="multipoint-expands"),
    pytest.param(f"filter:\n  enabled:\n    - name: {EXTRA}", "filter", [*DEFAULT_FILTER, EXTRA],
                 id="specific-point-plugin-appended"),
    pytest.param(f"filter:\n  enabled:\n    - name: {EXTRA}", "preFilter",
                 DEFAULT_PREFILTER, id="specific-point-only"),
    pytest.param("multiPoint:\n  enabled:\n    - name: CronJobPool", "filter", DEFAULT_FILTER,
                 id="default-pool-named-again-stays-in-place"),
    pytest.param("multiPoint:\n  disabled:\n    - name: CronJobPool", "preFilter",
                 [n for n in DEFAULT_PREFILTER if n != "CronJobPool"], id="default-pool-disabled"),
    pytest.param("filter:\n  enabled:\n    - name: NodePorts", "filter",
                 ["NodePorts", *[n for n in DEFAULT_FILTER if n != "NodePorts"]], id="specific-override-first"),
    pytest.param("filter:\n  disabled:\n    - name: '*'\n  enabled:\n    - name: NodeResourcesFit\n"
                 "    - name: NodeName", "filter", ["NodeResourcesFit", "NodeName"], id="filter-replaced"),
    pytest.param("score:\n  disabled:\n    - name: NoSuchPlugin", "score", DEFAULT_SCORE,
                 id="disabling-unknown-name-is-harmless"),
]


@pytest.mark.parametrize(("body", "point", "expected"), MERGE_CASES)
def test_plugin_merge(body: str, point: str, expected: list[Any]) -> None:
    p = loads(plugins_yaml(body), registry=WITH_EXTRA).profiles[0]
    got: list[Any] = weights(p) if point == "score" else names(p, point)
    assert got == expected


def test_disabled_pool_has_no_args() -> None:
    p = loads(plugins_yaml("multiPoint:\n  disabled:\n    - name: CronJobPool")).profiles[0]
    assert all("CronJobPool" not in names(p, point) for point in EXTENSION_POINTS)
    assert "CronJobPool" not in p.plugin_args


ARGS_CASES = [
    pytest.param("NodeResourcesFit", "scoringStrategy:\n  type: MostAllocated",
                 {"ignoredResources": [], "ignoredResourceGroups": [],
                  "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                             {"name": "memory", "weight": 1}]}},
                 id="fit-most-allocated-default-resources"),
    pytest.param("NodeResourcesFit", "scoringStrategy:\n  type: LeastAllocated\n  resources:\n"
                 "    - {name: cpu, weight: 0}\n    - {name: nvidia.com/gpu, weight: 5}",
                 {"ignoredResources": [], "ignoredResourceGroups": [],
                  "scoringStrategy": {"type": "LeastAllocated",
                                      "resources": [{"name": "cpu", "weight": 1},
                                                    {"name": "nvidia.com/gpu", "weight": 5}]}},
                 id="fit-weight-0-is-1"),
    pytest.param("NodeResourcesFit", "ignoredResourceGroups: [example.com]\nscoringStrategy:\n"
                 "  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
                 "    shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]",
                 {"ignoredResources": [], "ignoredResourceGroups": ["example.com"],
                  "scoringStrategy": {"type": "RequestedToCapacityRatio",
                                      "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
                                      "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                                             {"utilization": 100, "score": 10}]}}},
                 id="fit-requested-to-capacity-ratio"),
    pytest.param("NodeResourcesFit", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeResourcesFitArgs",
                 {"ignoredResources": [], "ignoredResourceGroups": [],
                  "scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                              {"name": "memory", "weight": 1}]}},
                 id="fit-type-meta-stripped"),
    pytest.param("NodeResourcesBalancedAllocation", "resources:\n  - {name: cpu}\n  - {name: example.com/foo}",
                 {"resources": [{"name": "cpu", "weight": 1}, {"name": "example.com/foo", "weight": 1}]},
                 id="balanced-resources"),
    pytest.param("NodeAffinity", "addedAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n"
                 "    nodeSelectorTerms:\n      - matchExpressions: [{key: pool, operator: NotIn, values: [batch]}]",
                 {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                     {"matchExpressions": [{"key": "pool", "operator": "NotIn", "values": ["batch"]}],
                      "matchFields": []}]}}},
                 id="node-affinity-added"),
    pytest.param("PodTopologySpread", "{}", {"defaultConstraints": [], "defaultingType": "System"},
                 id="spread-system-defaulting"),
    pytest.param("PodTopologySpread", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: PodTopologySpreadArgs\n"
                 "defaultingType: List\ndefaultConstraints:\n"
                 "  - {maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule,\n"
                 "     minDomains: 2, nodeAffinityPolicy: Ignore}",
                 {"defaultingType": "List",
                  "defaultConstraints": [{"maxSkew": 2, "topologyKey": "kubernetes.io/hostname",
                                          "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2,
                                          "nodeAffinityPolicy": "Ignore"}]},
                 id="spread-list-defaulting"),
    pytest.param("InterPodAffinity", "hardPodAffinityWeight: 100\nignorePreferredTermsOfExistingPods: true",
                 {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True},
                 id="inter-pod-affinity"),
    pytest.param("InterPodAffinity", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: InterPodAffinityArgs",
                 {"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False},
                 id="inter-pod-affinity-defaults"),
    pytest.param("TaintToleration", "anything: 1", {"anything": 1}, id="no-parser-passes-args-through"),
]


@pytest.mark.parametrize(("plugin", "args", "expected"), ARGS_CASES)
def test_plugin_args_defaults(plugin: str, args: str, expected: dict[str, Any]) -> None:
    lines = "".join(f"          {line}\n" for line in args.splitlines())
    text = (HEAD + "profiles:\n  - schedulerName: s\n    pluginConfig:\n"
            f"      - name: {plugin}\n        args:\n" + lines)
    assert loads(text).profiles[0].plugin_args[plugin] == expected


UNIMPLEMENTED_CASES = [
    pytest.param("extenders:\n  - urlPrefix: http://x\n", [], id="extenders-are-implemented"),
    pytest.param("parallelism: 16\n", ["parallelism"], id="parallelism"),
    pytest.param("enableProfiling: false\nenableContentionProfiling: true\n", [], id="profiling-is-implemented"),
    pytest.param("delayCacheUntilActive: true\n", ["delayCacheUntilActive"], id="delay-cache"),
    pytest.param("extenders: []\n", [], id="empty-extenders-is-nothing"),
    pytest.param("leaderElection:\n  leaderElect: false\n  resourceName: x\n", [], id="leader-election-is-implemented"),
    pytest.param("clientConnection:\n  contentType: application/vnd.kubernetes.protobuf\n", [], id="protobuf"),
    pytest.param("clientConnection:\n  contentType: application/json\n", [], id="json"),
    pytest.param("clientConnection:\n  contentType: application/yaml\n",
                 ["clientConnection.contentType (application/yaml; kubesched uses "
                  "application/vnd.kubernetes.protobuf)"], id="other-content-type"),
    pytest.param("clientConnection:\n  acceptContentTypes: application/json\n",
                 ["clientConnection.acceptContentTypes"], id="accept-content-types"),
    pytest.param("profiles:\n  - plugins:\n      multiPoint:\n        enabled:\n          - name: PodGroupPodsCount\n",
                 ["profiles[0].plugins.multiPoint.enabled[0] (PodGroupPodsCount)"], id="enabled-unimplemented"),
    pytest.param("profiles:\n  - plugins:\n      multiPoint:\n        enabled:\n          - name: VolumeBinding\n",
                 [], id="volume-binding-is-implemented"),
    pytest.param("profiles:\n  - plugins:\n      multiPoint:\n        enabled:\n          - name: PodTopologySpread\n"
                 "    pluginConfig:\n      - name: PodTopologySpread\n        args:\n          defaultingType: List\n",
                 [], id="pod-topology-spread-is-implemented"),
    pytest.param("profiles:\n  - plugins:\n      postFilter:\n        enabled:\n          - name: DefaultPreemption\n",
                 [], id="preemption-is-implemented"),
    pytest.param("profiles:\n  - pluginConfig:\n      - name: PodGroupPodsCount\n        args:\n"
                 "          minCount: 2\n",
                 ["profiles[0].pluginConfig[0] (PodGroupPodsCount)"], id="args-for-unimplemented"),
    pytest.param("profiles:\n  - pluginConfig:\n      - name: VolumeBinding\n        args:\n"
                 "          bindTimeoutSeconds: 60\n", [], id="volume-binding-args-are-implemented"),
    pytest.param("profiles:\n  - pluginConfig:\n      - name: InterPodAffinity\n        args:\n"
                 "          hardPodAffinityWeight: 2\n", [], id="inter-pod-affinity-args-are-implemented"),
    pytest.param("profiles:\n  - plugins:\n      placementScore:\n        enabled:\n          - name: X\n",
                 ["profiles[0].plugins.placementScore"], id="unimplemented-point"),
    pytest.param("profiles:\n  - plugins:\n      multiPoint:\n        disabled:\n          - name: DynamicResources\n",
                 [], id="disabling-unimplemented-default-is-nothing"),
]


@pytest.mark.parametrize(("body", "expected"), [
    pytest.param("", (True, True), id="defaults"),
    pytest.param("enableProfiling: false\n", (False, False), id="contention-follows-profiling"),
    pytest.param("enableProfiling: false\nenableContentionProfiling: true\n", (False, True), id="both-given"),
    pytest.param("enableContentionProfiling: false\n", (True, False), id="contention-off"),
])
def test_profiling_defaults_are_kube_schedulers(body: str, expected: tuple[bool, bool]) -> None:
    config = loads(HEAD + body)
    assert (config.enable_profiling, config.enable_contention_profiling) == expected


@pytest.mark.parametrize(("body", "expected"), UNIMPLEMENTED_CASES)
def test_unimplemented_fields_are_listed_not_dropped(body: str, expected: list[str]) -> None:
    config = loads(HEAD + body)
    assert list(config.unimplemented) == expected
    for profile in config.profiles:
        assert all(ref.name in kubesched_plugins() for refs in profile.plugins.values() for ref in refs)


def test_client_connection_and_backoff() -> None:
    config = loads(HEAD + "clientConnection:\n  kubeconfig: /etc/k.conf\n  qps: 0\n  burst: 0\n"
                   "podInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 60\npercentageOfNodesToScore: 35\n")
    assert config.client_connection.kubeconfig == "/etc/k.conf"
    assert (config.client_connection.qps, config.client_connection.burst) == (50.0, 100)
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (2.0, 60.0)
    assert config.percentage_of_nodes_to_score == 35


def test_negative_qps_turns_rate_limiting_off_as_in_client_go() -> None:
    assert loads(HEAD + "clientConnection:\n  qps: -1\n").client_connection.qps == -1.0


def test_leader_election_durations() -> None:
    le = loads(HEAD + "leaderElection:\n  leaseDuration: 1m30s\n  renewDeadline: 500ms\n  retryPeriod: 400ms\n"
               ).leader_election
    assert (le.lease_duration_seconds, le.renew_deadline_seconds, le.retry_period_seconds) == (90.0, 0.5, 0.4)
    assert le.leader_elect is True


def test_extra_plugins_and_args_parsers() -> None:
    def parse_batch(raw: Mapping[str, Any], path: str, errs: list[FieldError]) -> dict[str, Any]:
        if raw.get("fallback", "never") not in ("never", "general"):
            errs.append(invalid(f"{path}.fallback", raw["fallback"], 'must be "never" or "general"'))
        return {"fallback": raw.get("fallback", "never")}

    registry = in_tree_registry().merged([
        PluginSpec("Batch", lambda args: None, {"preFilter", "filter"}, args_parser=parse_batch),
        PluginSpec("Gpu", lambda args: None, {"filter", "score"})])
    text = plugins_yaml("multiPoint:\n  enabled:\n    - name: Batch\n    - name: Gpu\n      weight: 4")
    p = loads(text, registry=registry).profiles[0]
    assert names(p, "filter")[-2:] == ["Batch", "Gpu"]
    assert weights(p)[-1] == ("Gpu", 4)
    assert p.plugin_args["Batch"] == {"fallback": "never"}
    bad = HEAD + "profiles:\n  - pluginConfig:\n      - name: Batch\n        args: {fallback: maybe}\n"
    with pytest.raises(ConfigError, match=r'profiles\[0\]\.pluginConfig\[0\]\.args\.fallback: Invalid value: "maybe"'):
        loads(bad, registry=registry)


REALISTIC = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceNamespace: kube-system
  resourceName: kube-scheduler
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 100
  burst: 200
percentageOfNodesToScore: 50
profiles:
  - schedulerName: default-scheduler
    plugins:
      score:
        disabled:
          - name: ImageLocality
          - name: PodTopologySpread
        enabled:
          - name: NodeResourcesBalancedAllocation
            weight: 5
  - schedulerName: bin-packing-scheduler
    percentageOfNodesToScore: 100
    plugins:
      multiPoint:
        disabled:
          - name: NodeResourcesBalancedAllocation
      filter:
        disabled:
          - name: VolumeZone
    pluginConfig:
      - name: NodeResourcesFit
        args:
          apiVersion: kubescheduler.config.k8s.io/v1
          kind: NodeResourcesFitArgs
          scoringStrategy:
            type: MostAllocated
            resources:
              - name: cpu
                weight: 1
              - name: memory
                weight: 1
      - name: PodTopologySpread
        args:
          defaultingType: List
          defaultConstraints:
            - maxSkew: 1
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: ScheduleAnyway
"""


def test_realistic_kube_scheduler_config_loads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "kube-scheduler-config.yaml"
    path.write_text(REALISTIC)
    config: SchedulerConfig = load(str(path))
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "bin-packing-scheduler"]
    first, second = config.profiles
    # an explicitly re-enabled default moves to the front of its extension point, as in kube-scheduler
    assert weights(first) == [("NodeResourcesBalancedAllocation", 5), ("TaintToleration", 3), ("NodeAffinity", 2),
                              ("NodeResourcesFit", 1), ("VolumeBinding", 1), ("InterPodAffinity", 2),
                              ("DynamicResources", 2)]
    assert first.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    # PodTopologySpread disabled at score only: it still filters
    assert "PodTopologySpread" in names(first, "filter")
    assert weights(second) == [*DEFAULT_SCORE[:7], ("ImageLocality", 1)]
    assert second.plugin_args["PodTopologySpread"] == {
        "defaultingType": "List",
        "defaultConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway"}]}
    assert first.plugin_args["PodTopologySpread"] == {"defaultConstraints": [], "defaultingType": "System"}
    assert "NodeResourcesBalancedAllocation" not in names(second, "preScore")
    assert second.plugin_args["NodeResourcesFit"]["scoringStrategy"]["type"] == "MostAllocated"
    assert second.percentage_of_nodes_to_score == 100
    assert config.percentage_of_nodes_to_score == 50
    assert config.client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf"
    assert (config.client_connection.qps, config.client_connection.burst) == (100.0, 200)
    assert config.unimplemented == ()
