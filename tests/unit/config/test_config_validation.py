"""Every validation rule of the config loader: the error names the field path, the bad value and what is valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.config import ConfigError, load, loads

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def profile(body: str) -> str:
    """A config with one profile whose indented body (plugins:, pluginConfig:, ...) is `body`."""
    lines = "".join(f"    {line}\n" for line in body.strip("\n").splitlines())
    return HEAD + "profiles:\n  - schedulerName: s\n" + lines


def spread_args(args: str) -> str:
    lines = "".join(f"          {line}\n" for line in args.strip("\n").splitlines())
    return profile("pluginConfig:\n  - name: PodTopologySpread\n    args:\n") + lines


def fit_args(strategy: str) -> str:
    lines = "".join(f"          {line}\n" for line in strategy.strip("\n").splitlines())
    return profile("pluginConfig:\n  - name: NodeResourcesFit\n    args:\n") + lines


CASES = [
    pytest.param("profiles: [", "cannot parse as YAML or JSON", id="bad-yaml"),
    pytest.param("- 1\n- 2\n", "must be a KubeSchedulerConfiguration mapping", id="not-a-mapping"),
    pytest.param(HEAD + "kind: A\nkind: B\n", "found duplicate key 'kind'", id="duplicate-yaml-key"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
                 'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported values: '
                 '"kubescheduler.config.k8s.io/v1"', id="old-api-version"),
    pytest.param("kind: KubeSchedulerConfiguration\n", 'apiVersion: Required value: must be '
                 '"kubescheduler.config.k8s.io/v1"', id="missing-api-version"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeletConfiguration\n",
                 'kind: Unsupported value: "KubeletConfiguration": supported values: '
                 '"KubeSchedulerConfiguration"', id="wrong-kind"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\n", "kind: Required value", id="missing-kind"),
    pytest.param(HEAD + "profile: []\n", "profile: Unknown field (did you mean profiles?): valid fields here are: "
                 "apiVersion, clientConnection, delayCacheUntilActive", id="unknown-top-level-field"),
    pytest.param(HEAD + "profiles: {}\n", "profiles: Invalid value: {}: must be a list", id="profiles-not-list"),
    pytest.param(HEAD + "percentageOfNodesToScore: 101\n",
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]", id="percentage-high"),
    pytest.param(HEAD + "percentageOfNodesToScore: half\n",
                 'percentageOfNodesToScore: Invalid value: "half": must be an integer', id="percentage-type"),
    pytest.param(profile("percentageOfNodesToScore: -1"),
                 "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
                 id="profile-percentage-negative"),
    pytest.param(HEAD + "parallelism: 0\n",
                 "parallelism: Invalid value: 0: should be an integer value greater than zero", id="parallelism"),
    pytest.param(HEAD + "podInitialBackoffSeconds: 0\n",
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0", id="initial-backoff"),
    pytest.param(HEAD + "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 2\n",
                 "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to podInitialBackoffSeconds",
                 id="max-backoff-below-initial"),
    pytest.param(HEAD + "clientConnection:\n  burst: -1\n",
                 "clientConnection.burst: Invalid value: -1: must be non-negative", id="negative-burst"),
    pytest.param(HEAD + "clientConnection:\n  qps: fast\n",
                 'clientConnection.qps: Invalid value: "fast": must be a number', id="qps-type"),
    pytest.param(HEAD + "clientConnection:\n  timeout: 3\n",
                 "clientConnection.timeout: Unknown field: valid fields here are: acceptContentTypes, burst, "
                 "contentType, kubeconfig, qps", id="client-connection-unknown-field"),
    pytest.param(HEAD + "leaderElection:\n  leaderElect: true\n  resourceLock: endpoints\n",
                 'leaderElection.resourceLock: Unsupported value: "endpoints": supported values: "leases"',
                 id="resource-lock"),
    pytest.param(HEAD + "leaderElection:\n  leaseDuration: 5s\n  renewDeadline: 10s\n",
                 'leaderElection.leaseDuration: Invalid value: "5s": must be greater than `renewDeadline`',
                 id="lease-shorter-than-renew"),
    pytest.param(HEAD + "leaderElection:\n  retryPeriod: 2 seconds\n",
                 'leaderElection.retryPeriod: Invalid value: "2 seconds": must be a duration such as "15s"',
                 id="bad-duration"),
    pytest.param(HEAD + "leaderElection:\n  leaderElect: yes-please\n",
                 'leaderElection.leaderElect: Invalid value: "yes-please": must be true or false', id="bool-type"),
    pytest.param(HEAD + "profiles:\n  - schedulerName: a\n  - schedulerName: a\n",
                 'profiles[1].schedulerName: Invalid value: "a": duplicate of profiles[0].schedulerName',
                 id="duplicate-scheduler-name"),
    pytest.param(HEAD + "profiles:\n  - schedulerName: a\n  - percentageOfNodesToScore: 5\n",
                 "profiles[1].schedulerName: Required value", id="missing-scheduler-name"),
    pytest.param(HEAD + "profiles:\n  - schedulerName: ''\n", "profiles[0].schedulerName: Required value",
                 id="empty-scheduler-name"),
    pytest.param(profile("plugin: {}"), "profiles[0].plugin: Unknown field (did you mean plugins?): "
                 "valid fields here are: percentageOfNodesToScore, pluginConfig, plugins, schedulerName",
                 id="unknown-profile-field"),
    pytest.param(profile("plugins:\n  scores: {}"), "profiles[0].plugins.scores: Unknown field (did you mean score?): "
                 "valid fields here are: bind, filter, multiPoint", id="unknown-extension-point"),
    pytest.param(profile("plugins:\n  score:\n    enable: []"), "profiles[0].plugins.score.enable: "
                 "Unknown field (did you mean enabled?): valid fields here are: disabled, enabled",
                 id="unknown-plugin-set-field"),
    pytest.param(profile("plugins:\n  score:\n    enabled:\n      - name: Foo"),
                 'profiles[0].plugins.score.enabled[0].name: Unsupported value: "Foo": supported values: '
                 '"CronJobPool", "DefaultBinder", "DefaultPreemption", "DynamicResources", "ImageLocality", '
                 '"InterPodAffinity", "NodeAffinity", "NodeDeclaredFeatures", "NodeName", "NodePorts", '
                 '"NodeResourcesBalancedAllocation", "NodeResourcesFit", "NodeUnschedulable", "NodeVolumeLimits", '
                 '"PodTopologySpread", "PrioritySort", "SchedulingGates", "TaintToleration", "UnsupportedPodFields", '
                 '"VolumeBinding", "VolumeRestrictions", "VolumeZone" '
                 '(kube-scheduler\'s DeferredPodScheduling',
                 id="unknown-plugin"),
    pytest.param(profile("plugins:\n  filter:\n    enabled:\n      - weight: 1"),
                 "profiles[0].plugins.filter.enabled[0].name: Required value", id="plugin-without-name"),
    pytest.param(profile("plugins:\n  score:\n    enabled:\n      - name: ImageLocality\n        weight: -1"),
                 "profiles[0].plugins.score.enabled[0].weight: Invalid value: -1: must be a positive integer",
                 id="negative-weight"),
    pytest.param(profile("plugins:\n  multiPoint:\n    enabled:\n      - name: ImageLocality\n        weight: x"),
                 'profiles[0].plugins.multiPoint.enabled[0].weight: Invalid value: "x": must be an integer',
                 id="weight-type"),
    pytest.param(profile("plugins:\n  filter:\n    enabled:\n      - name: EBSLimits"),
                 'profiles[0].plugins.filter.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
                 '"kubescheduler.config.k8s.io/v1"', id="removed-plugin"),
    pytest.param(profile("plugins:\n  score:\n    enabled:\n      - name: NodeName"),
                 'profiles[0].plugins.score.enabled[0]: Invalid value: "NodeName": plugin does not extend score '
                 "(it implements: filter, preFilter)", id="plugin-not-at-point"),
    pytest.param(profile("plugins:\n  filter:\n    enabled:\n      - name: CronJobPool\n      - name: CronJobPool"),
                 'profiles[0].plugins.filter.enabled[1]: Duplicate value: "CronJobPool"', id="duplicate-at-point"),
    # CronJobPool is a default: disabled first, so neither entry replaces the default in place
    pytest.param(profile("plugins:\n  multiPoint:\n    disabled:\n      - name: CronJobPool\n    enabled:\n"
                         "      - name: CronJobPool\n      - name: CronJobPool"),
                 'profiles[0].plugins.multiPoint.enabled[1]: Invalid value: "CronJobPool": plugin already '
                 "registered as preFilter plugin", id="duplicate-multipoint"),
    pytest.param(profile("plugins:\n  queueSort:\n    disabled:\n      - name: '*'"),
                 "profiles[0].plugins.queueSort: Invalid value: []: exactly one queue sort plugin must be enabled",
                 id="no-queue-sort"),
    pytest.param(profile("plugins:\n  multiPoint:\n    disabled:\n      - name: DefaultBinder"),
                 "profiles[0].plugins.bind: Required value: at least one bind plugin is needed "
                 "(kubesched has: DefaultBinder)", id="no-binder"),
    pytest.param(HEAD + "profiles:\n  - schedulerName: a\n  - schedulerName: b\n    plugins:\n      queueSort:\n"
                 "        disabled: [{name: '*'}]\n        enabled: [{name: PrioritySort}, {name: PrioritySort}]\n",
                 'profiles[1].plugins.queueSort.enabled[1]: Duplicate value: "PrioritySort"', id="queue-sort-dup"),
    pytest.param(HEAD + "profiles:\n  - schedulerName: a\n  - schedulerName: b\n    plugins:\n      queueSort:\n"
                 "        disabled: [{name: '*'}]\n",
                 "profiles[1].plugins.queueSort: Invalid value: []: must be the same for all profiles",
                 id="queue-sort-differs"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity"),
                 'profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity"', id="duplicate-plugin-config"),
    pytest.param(profile("pluginConfig:\n  - name: Foo\n    args: {}"),
                 'profiles[0].pluginConfig[0].name: Unsupported value: "Foo": supported values: "CronJobPool"',
                 id="unknown-plugin-config"),
    pytest.param(profile("pluginConfig:\n  - args: {}"), "profiles[0].pluginConfig[0].name: Required value",
                 id="plugin-config-without-name"),
    pytest.param(profile("pluginConfig:\n  - name: GCEPDLimits"),
                 'profiles[0].pluginConfig[0]: Invalid value: "GCEPDLimits": was invalid in version',
                 id="removed-plugin-config"),
    pytest.param(profile("pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      kind: NodeAffinityArgs"),
                 'profiles[0].pluginConfig[0].args.kind: Invalid value: "NodeAffinityArgs": must be '
                 '"NodeResourcesFitArgs"', id="args-kind"),
    pytest.param(profile("pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      apiVersion: v1"),
                 'profiles[0].pluginConfig[0].args.apiVersion: Unsupported value: "v1": supported values: '
                 '"kubescheduler.config.k8s.io/v1"', id="args-api-version"),
    pytest.param(profile("pluginConfig:\n  - name: NodeResourcesFit\n    args: [1]"),
                 "profiles[0].pluginConfig[0].args: Invalid value: [1]: must be a mapping", id="args-type"),
    pytest.param(profile("pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 101"),
                 "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range "
                 "[0, 100]", id="inter-pod-affinity-weight-too-big"),
    pytest.param(profile("pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                         "      ignorePreferredTermsOfExistingPods: maybe"),
                 "profiles[0].pluginConfig[0].args.ignorePreferredTermsOfExistingPods", id="inter-pod-affinity-bool"),
    pytest.param(profile("pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinity: 2"),
                 "profiles[0].pluginConfig[0].args.hardPodAffinity: Unknown field",
                 id="inter-pod-affinity-unknown-arg"),
    pytest.param(fit_args("scoring: {}"), "profiles[0].pluginConfig[0].args.scoring: "
                 "Unknown field (did you mean scoringStrategy?): valid fields "
                 "here are: ignoredResourceGroups, ignoredResources, scoringStrategy", id="fit-unknown-field"),
    pytest.param(fit_args("scoringStrategy:\n  type: Best"),
                 'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Best": supported '
                 'values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"', id="strategy-type"),
    pytest.param(fit_args("scoringStrategy:\n  resources: [{name: cpu, weight: 1}]"),
                 'profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: ""',
                 id="strategy-without-type"),
    pytest.param(fit_args("scoringStrategy:\n  type: MostAllocated\n  resources: [{name: cpu, weight: 101}]"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: "
                 "resource weight of cpu not in valid range (0, 100]", id="strategy-weight"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: "
                 "must be specified when type is RequestedToCapacityRatio", id="ratio-missing"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio: "
                          "{shape: []}"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: Required value: "
                 "at least one point must be specified", id="ratio-empty-shape"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
                          "    shape: [{utilization: 50, score: 1}, {utilization: 50, score: 5}]"),
                 "requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in "
                 "increasing order", id="ratio-unsorted"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
                          "    shape: [{utilization: 0, score: 11}, {utilization: 101, score: 0}]"),
                 "requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
                 id="ratio-score-range"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
                          "    shape: [{utilization: 0, score: 1}, {utilization: 101, score: 0}]"),
                 "requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in valid range [0, 100]",
                 id="ratio-utilization-range"),
    pytest.param(fit_args("scoringStrategy:\n  type: RequestedToCapacityRatio\n  requestedToCapacityRatio:\n"
                          "    shape: [{utilization: 0, score: 1, x: 2}]"),
                 "requestedToCapacityRatio.shape[0].x: Unknown field", id="ratio-unknown-field"),
    pytest.param(fit_args("scoringStrategy:\n  type: MostAllocated\n  requestedToCapacityRatio: {shape: []}"),
                 "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Forbidden: must be "
                 "nil when type is not RequestedToCapacityRatio", id="ratio-forbidden"),
    pytest.param(fit_args("ignoredResourceGroups: [example.com/gpu]"),
                 'args.ignoredResourceGroups[0]: Invalid value: "example.com/gpu": resource group name can\'t '
                 "contain '/'", id="ignored-group-slash"),
    pytest.param(fit_args("ignoredResources: ['-bad']"),
                 'args.ignoredResources[0]: Invalid value: "-bad": name part must consist of alphanumeric',
                 id="ignored-resource-name"),
    # PodTopologySpreadArgs, as kube-scheduler's ValidatePodTopologySpreadArgs words them.
    pytest.param(spread_args("defaultingType: Foo"),
                 'profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Foo": supported values: '
                 '"System", "List"', id="spread-defaulting-type"),
    pytest.param(spread_args("defaultConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
                             "DoNotSchedule}"),
                 'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when '
                 ".defaultConstraints are not empty", id="spread-system-with-constraints"),
    pytest.param(spread_args("defaultingType: List\ndefaultConstraints:\n  - {maxSkew: 0, topologyKey: zone, "
                             "whenUnsatisfiable: DoNotSchedule}"),
                 "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in valid "
                 "range (0, inf)", id="spread-max-skew"),
    pytest.param(spread_args("defaultingType: List\ndefaultConstraints:\n  - {maxSkew: 1, topologyKey: '', "
                             "whenUnsatisfiable: DoNotSchedule}"),
                 "profiles[0].pluginConfig[0].args.defaultConstraints[0].topologyKey: Required value: can not be "
                 "empty", id="spread-topology-key"),
    pytest.param(spread_args("defaultingType: List\ndefaultConstraints:\n  - {maxSkew: 1, topologyKey: zone, "
                             "whenUnsatisfiable: Maybe}"),
                 'profiles[0].pluginConfig[0].args.defaultConstraints[0].whenUnsatisfiable: Unsupported value: '
                 '"Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"', id="spread-when-unsatisfiable"),
    pytest.param(spread_args("defaultingType: List\ndefaultConstraints:\n  - {maxSkew: 1, topologyKey: zone, "
                             "whenUnsatisfiable: DoNotSchedule, labelSelector: {}}"),
                 "profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: constraint "
                 "must not define a selector, as they deduced for each pod", id="spread-selector-forbidden"),
    pytest.param(spread_args("defaultingType: List\ndefaultConstraints:\n"
                             "  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
                             "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}"),
                 'profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"',
                 id="spread-duplicate-constraint"),
    pytest.param(spread_args("defaultingType: List\nextra: 1"),
                 "profiles[0].pluginConfig[0].args.extra: Unknown field: valid fields here are: "
                 "defaultConstraints, defaultingType", id="spread-unknown-field"),
    pytest.param(profile("pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n"
                         "        - {name: cpu, weight: 2}"),
                 "args.resources[0].weight: Invalid value: 2: must be 1", id="balanced-weight"),
    pytest.param(profile("pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n"
                         "        - {name: cpu}\n        - {name: cpu}"),
                 'args.resources[1].name: Duplicate value: "cpu"', id="balanced-duplicate"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchExpressions: [{key: zone, operator: Near, values: [a]}]"),
                 "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: \"Near\": supported "
                 'values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"', id="affinity-operator"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchExpressions: [{key: zone, operator: In}]"),
                 "matchExpressions[0].values: Invalid value: []: for 'in', 'notin' operators, values set can't be "
                 "empty", id="affinity-in-empty"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: 1\n"
                         "            preference:\n              matchExpressions: [{key: cpus, operator: Gt, "
                         "values: [four]}]"),
                 "preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0]: Invalid value: "
                 "\"four\": for 'Gt', 'Lt' operators, the value must be an integer", id="affinity-gt-integer"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchExpressions: [{key: zone, operator: Exists, values: [a]}]"),
                 "values set must be empty for exists and does not exist", id="affinity-exists-values"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchFields: [{key: metadata.name, operator: Exists}]"),
                 'matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"',
                 id="affinity-match-fields-operator"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchFields: [{key: metadata.name, operator: In, values: [a, b]}]"),
                 'matchFields[0].values: Invalid value: ["a", "b"]: must have one element',
                 id="affinity-match-fields-values"),
    pytest.param(profile("pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
                         "        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n"
                         "            - matchLabels: {a: b}"),
                 "nodeSelectorTerms[0].matchLabels: Unknown field (did you mean matchFields?): "
                 "valid fields here are: matchExpressions, matchFields", id="affinity-unknown-field"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_invalid_config_names_the_field(text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        loads(text, source="sched.yaml")
    message = str(info.value)
    assert message.startswith("sched.yaml: ")
    assert expected in message


def test_error_names_the_file_and_lists_every_problem(tmp_path: Path) -> None:
    path = tmp_path / "kube-scheduler.yaml"
    path.write_text(HEAD + "percentageOfNodesToScore: 200\nclientConnection:\n  burst: -5\n")
    with pytest.raises(ConfigError) as info:
        load(str(path))
    assert str(info.value) == (
        f"{path}: 2 errors:\n"
        "  - percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100]\n"
        "  - clientConnection.burst: Invalid value: -5: must be non-negative"
    )
    assert [e.path for e in info.value.errors] == ["percentageOfNodesToScore", "clientConnection.burst"]
    assert isinstance(info.value, ValueError)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.yaml: cannot read the config file"):
        load(str(tmp_path / "nope.yaml"))


def test_override_needs_a_single_profile() -> None:
    text = HEAD + "profiles:\n  - schedulerName: a\n  - schedulerName: b\n"
    with pytest.raises(ConfigError, match=r"profiles: Invalid value: \"2 profiles\": a scheduler name override"):
        loads(text, scheduler_name_override="x")
