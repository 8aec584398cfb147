"""--feature-gates as kube-scheduler v1.37.2 parses and checks them (component-base's featuregate and
compatibility registry, same messages), and the gates kubesched implements, refuses, or takes with
no effect."""

from __future__ import annotations

import pytest

from kubesched.config.feature_specs import ALPHA, BETA, DEPENDENCIES, DEPRECATED, GA, GATES
from kubesched.config.features import (
    SCHEDULER_GATES,
    FeatureGateError,
    FeatureGates,
    StageWarning,
    kubesched_values,
    parse_feature_gates,
)


@pytest.mark.parametrize(("name", "spec"), [
    # kube_features.go at 1.37: alpha in 1.35, beta (still off) in 1.37
    pytest.param("GenericWorkload", (False, BETA, False), id="generic-workload"),
    pytest.param("SchedulerPopFromBackoffQ", (True, BETA, False), id="pop-from-backoff"),
    pytest.param("DynamicResourceAllocation", (True, GA, True), id="dra-locked"),
    pytest.param("InterPodAffinityHostnameFastPath", (False, ALPHA, False), id="alpha"),
    # client-go's and component-base's gates are kube-scheduler's too
    pytest.param("WatchListClient", (True, BETA, False), id="client-go"),
    pytest.param("ContextualLogging", (True, BETA, False), id="logs"),
    pytest.param("ComponentFlagz", (True, BETA, False), id="zpages"),
    # a spec with MinCompatibilityVersion 1.37 is skipped at the default min compatibility 1.36
    pytest.param("DRAFractionalCapacityRange", (False, BETA, False), id="min-compatibility"),
    # GA in 1.37 and on, locked only from 1.38; specs spelled with their fields in another order
    pytest.param("DRADeviceTaintRules", (True, GA, False), id="ga-not-yet-locked"),
    pytest.param("CustomResourceFieldSelectors", (True, GA, True), id="fields-reordered"),
    pytest.param("SeparateCacheWatchRPC", (False, DEPRECATED, True), id="deprecated-locked"),
])
def test_gate_specs_are_v1_37_2s(name: str, spec: tuple[bool, str, bool]) -> None:
    assert GATES[name] == spec


def test_tables_hold_together() -> None:
    assert set(GATES) >= SCHEDULER_GATES
    assert all(dep in GATES for deps in DEPENDENCIES.values() for dep in deps)
    assert set(DEPENDENCIES) <= set(GATES)
    # every scheduler gate is implemented at its default, but the two kubesched serves nothing for
    off_default = {name for name in SCHEDULER_GATES if GATES[name][0] not in kubesched_values(name)}
    assert off_default == {"ComponentFlagz", "ComponentStatusz"}


@pytest.mark.parametrize(("values", "explicit"), [
    pytest.param([], {}, id="none"),
    pytest.param([""], {}, id="empty"),
    pytest.param(["SchedulerPopFromBackoffQ=false"], {"SchedulerPopFromBackoffQ": False}, id="one"),
    pytest.param(["kube:SchedulerPopFromBackoffQ=false"], {"SchedulerPopFromBackoffQ": False}, id="kube-prefix"),
    pytest.param([" SchedulerPopFromBackoffQ = F ,,"], {"SchedulerPopFromBackoffQ": False}, id="spaces-go-bool"),
    pytest.param(["SchedulerPopFromBackoffQ=false", "SchedulerPopFromBackoffQ=1"], {"SchedulerPopFromBackoffQ": True},
                 id="repeated-last-wins"),
    pytest.param(["DynamicResourceAllocation=true"], {"DynamicResourceAllocation": True}, id="locked-at-its-value"),
])
def test_parses(values: list[str], explicit: dict[str, bool]) -> None:
    gates, _ = parse_feature_gates(values)
    assert dict(gates.explicit) == explicit


@pytest.mark.parametrize(("values", "message"), [
    pytest.param(["Foo=true"], "unrecognized feature gate: Foo", id="unknown"),
    pytest.param(["DynamicResourceAllocation=false"],
                 "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true", id="locked"),
    pytest.param(["DynamicResourceAllocation=false,VolumeAttributesClass=false"],
                 "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, "
                 "cannot set feature gate VolumeAttributesClass to false, feature is locked to true]", id="aggregate"),
    pytest.param(["GenericWorkload"], "missing bool value for GenericWorkload", id="no-value"),
    pytest.param(["GenericWorkload=yes"],
                 'invalid value of GenericWorkload=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
                 id="not-a-go-bool"),
    pytest.param(["wardle:GenericWorkload=true"], "component not registered: wardle", id="other-component"),
    pytest.param(["kube:GenericWorkload=true,SchedulerPopFromBackoffQ=false"],
                 "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use",
                 id="mixed-prefixes"),
    pytest.param(["TopologyAwareWorkloadScheduling=true"],
                 "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: "
                 "[GenericWorkload]", id="dependency"),
])
def test_refused_as_kube_scheduler_refuses(values: list[str], message: str) -> None:
    with pytest.raises(FeatureGateError) as info:
        parse_feature_gates(values)
    assert str(info.value) == message


def test_dependency_met() -> None:
    gates, _ = parse_feature_gates(["GenericWorkload=true,TopologyAwareWorkloadScheduling=true"])
    assert gates.generic_workload


@pytest.mark.parametrize(("values", "warnings"), [
    pytest.param(["DynamicResourceAllocation=true"],
                 [StageWarning("Warning: setting GA feature gate. It will be removed in a future release.",
                               "DynamicResourceAllocation", True)], id="ga"),
    pytest.param(["AllowDNSOnlyNodeCSR=false"],
                 [StageWarning("Warning: setting deprecated feature gate. It will be removed in a future release.",
                               "AllowDNSOnlyNodeCSR", False)], id="deprecated"),
    pytest.param(["GenericWorkload=false"], [], id="beta"),
])
def test_stage_warnings(values: list[str], warnings: list[StageWarning]) -> None:
    assert parse_feature_gates(values)[1] == warnings


def test_defaults_and_typed_gates() -> None:
    gates = FeatureGates()
    assert (gates.generic_workload, gates.scheduler_pop_from_backoff_q) == (False, True)
    assert gates.enabled("PodLevelResources")
    assert not gates.enabled("AllAlpha")
    with pytest.raises(KeyError):
        gates.enabled("Foo")


def test_all_alpha_sets_the_alpha_gates_not_set_one_by_one() -> None:
    # alone, AllAlpha=true fails in v1.37.2 too: the alpha workload gates need GenericWorkload, a beta
    with pytest.raises(FeatureGateError, match=r"^\[CompositePodGroup is enabled, but depends on features that "
                                               r"are disabled: \[GenericWorkload\], "):
        parse_feature_gates(["AllAlpha=true"])
    gates, _ = parse_feature_gates(["InterPodAffinityHostnameFastPath=false,AllAlpha=true,GenericWorkload=true"])
    assert gates.enabled("TaintTolerationComparisonOperators")
    assert not gates.enabled("InterPodAffinityHostnameFastPath")
    assert not gates.enabled("SchedulerAsyncAPICalls")  # beta: AllAlpha leaves it
    assert "TaintTolerationComparisonOperators=true (kube-scheduler v1.37.2's default: false)" in gates.unsupported()
    assert "AllAlpha=true" not in gates.without_effect()


def test_all_beta_false_turns_off_the_beta_scheduler_gates() -> None:
    gates, _ = parse_feature_gates(["AllBeta=false,SchedulerAsyncPreemption=true"])
    assert not gates.enabled("PodLevelResources")
    assert gates.enabled("SchedulerAsyncPreemption")
    assert "PodLevelResources=false (kube-scheduler v1.37.2's default: true)" in gates.unsupported()


@pytest.mark.parametrize(("values", "unsupported", "without_effect"), [
    pytest.param(["SchedulerPopFromBackoffQ=false"], [], [], id="implemented-both-ways"),
    pytest.param(["GenericWorkload=true"], ["GenericWorkload=true (kube-scheduler v1.37.2's default: false)"], [],
                 id="gang-scheduling-not-yet"),
    pytest.param(["SchedulerAsyncPreemption=false"],
                 ["SchedulerAsyncPreemption=false (kube-scheduler v1.37.2's default: true)"], [], id="default-only"),
    pytest.param(["ComponentFlagz=false,ComponentStatusz=false"], [], [], id="no-flagz-as-kubesched"),
    pytest.param(["PodLevelResources=true"], [], [], id="at-default"),
    pytest.param(["WatchListClient=false,ContextualLogging=true"], [], ["WatchListClient=false"], id="client-go"),
    pytest.param(["LocalStorageCapacityIsolationFSQuotaMonitoring=false"], [], [], id="other-component-at-default"),
    pytest.param(["LocalStorageCapacityIsolationFSQuotaMonitoring=true"], [],
                 ["LocalStorageCapacityIsolationFSQuotaMonitoring=true"], id="other-component"),
])
def test_what_kubesched_does_with_a_gate(values: list[str], unsupported: list[str], without_effect: list[str]) -> None:
    gates, _ = parse_feature_gates(values)
    assert gates.unsupported() == unsupported
    assert gates.without_effect() == without_effect
