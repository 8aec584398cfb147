"""--feature-gates: parsed and checked as kube-scheduler v1.37.2 does (k8s.io/component-base@v0.37.2
featuregate/feature_gate.go and compatibility/registry.go, same messages), and what kubesched does
with each gate.

Three kinds of gate:
- the gates kube-scheduler's scheduling consults (`SCHEDULER_GATES`: its queue, cycles, plugins,
  leader election and endpoints). kubesched behaves as each one at the values `kubesched_values`
  gives; set to another, the gate is refused, since kubesched would then decide otherwise;
- every other gate kube-scheduler registers (other components', its client's, its logging's):
  accepted, changing nothing in kubesched, which says so at start;
- names kube-scheduler does not know: refused, as kube-scheduler refuses them.

The composition root parses the flag into a `FeatureGates` and hands each consumer the booleans it
needs; the framework and the plugins never read gates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from kubesched.config.feature_specs import ALPHA, BETA, DEPENDENCIES, DEPRECATED, GA, GATES

__all__ = [
    "SCHEDULER_GATES",
    "FeatureGateError",
    "FeatureGates",
    "StageWarning",
    "kubesched_values",
    "parse_feature_gates",
]

ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"
KUBE_COMPONENT = "kube"

# The gates pkg/scheduler and cmd/kube-scheduler of v1.37.2 consult.
SCHEDULER_GATES: frozenset[str] = frozenset({
    "ComponentFlagz", "ComponentStatusz", "CompositePodGroup", "CoordinatedLeaderElection", "DRAAdminAccess",
    "DRAConsumableCapacity", "DRADerivedAttributes", "DRADeviceBindingConditions", "DRADeviceCompatibilityGroups",
    "DRADeviceTaintRules", "DRADeviceTaints", "DRAExtendedResource", "DRAFractionalCapacityRange",
    "DRAListTypeAttributes", "DRANodeAllocatableResources", "DRAOptionalNodeOperations", "DRAPartitionableDevices",
    "DRAPrioritizedList", "DRAResourceClaimDeviceStatus", "DRASchedulerFilterTimeout", "DRAWorkloadResourceClaims",
    "DynamicResourceAllocation", "GenericWorkload", "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScaling", "InPlacePodVerticalScalingSchedulerPreemption", "InterPodAffinityHostnameFastPath",
    "MatchLabelKeysInPodTopologySpread", "NodeDeclaredFeatures", "NodeInclusionPolicyInPodTopologySpread",
    "NominatedNodeNameForExpectation", "OpportunisticBatching", "PodGroupPreemptionPolicy", "PodLevelResources",
    "SchedulerAsyncAPICalls", "SchedulerAsyncPreemption", "SchedulerPopFromBackoffQ", "SchedulerPreQueueingHints",
    "StorageCapacityScoring", "TaintTolerationComparisonOperators", "TopologyAwareWorkloadScheduling",
    "VolumeAttributesClass", "VolumeLimitScaling",
})
BOTH: frozenset[bool] = frozenset({True, False})
# Scheduler gates kubesched does not behave as at their default alone; every other one it behaves
# as at its default only.
_KUBESCHED_VALUES: Mapping[str, frozenset[bool]] = {
    "SchedulerPopFromBackoffQ": BOTH,
    # kubesched serves neither /flagz nor /statusz (on by default in kube-scheduler): as with false.
    "ComponentFlagz": frozenset({False}),
    "ComponentStatusz": frozenset({False}),
}
assert set(_KUBESCHED_VALUES) <= SCHEDULER_GATES <= set(GATES)


def kubesched_values(name: str) -> frozenset[bool]:
    """The values of scheduler gate `name` that kubesched behaves as."""
    return _KUBESCHED_VALUES.get(name, frozenset({GATES[name][0]}))


class FeatureGateError(ValueError):
    """A --feature-gates value kube-scheduler refuses, with its message."""


@dataclass(frozen=True)
class FeatureGates:
    """The gates' values: those set on the command line (`explicit`), the others at their default."""

    explicit: Mapping[str, bool] = field(default_factory=lambda: MappingProxyType({}))

    def enabled(self, name: str) -> bool:
        """Raises KeyError for a gate kube-scheduler does not register."""
        default = GATES[name][0] if name not in (ALL_ALPHA, ALL_BETA) else False
        return self.explicit.get(name, default)

    @property
    def generic_workload(self) -> bool:
        """GenericWorkload: the Workload API and gang scheduling (off by default)."""
        return self.enabled("GenericWorkload")

    @property
    def scheduler_pop_from_backoff_q(self) -> bool:
        """SchedulerPopFromBackoffQ: pop from backoffQ when activeQ is empty (on by default)."""
        return self.enabled("SchedulerPopFromBackoffQ")

    def unsupported(self) -> list[str]:
        """`Name=value (default d)` for each scheduler gate set to a value kubesched does not behave as."""
        return [f"{name}={_go_bool(v)} (kube-scheduler v1.37.2's default: {_go_bool(GATES[name][0])})"
                for name, v in sorted(self.explicit.items())
                if name in SCHEDULER_GATES and v != GATES[name][0] and v not in kubesched_values(name)]

    def without_effect(self) -> list[str]:
        """`Name=value` for each other gate set off its default: accepted, changing nothing here."""
        return [f"{name}={_go_bool(v)}" for name, v in sorted(self.explicit.items())
                if name not in SCHEDULER_GATES and name not in (ALL_ALPHA, ALL_BETA) and v != GATES[name][0]]


class StageWarning(NamedTuple):
    """kube-scheduler's warning when a GA or deprecated gate is set."""

    message: str
    gate: str
    value: bool


def parse_feature_gates(values: Sequence[str]) -> tuple[FeatureGates, list[StageWarning]]:
    """The gates from the --feature-gates values (repeatable; comma-separated `[component:]Name=bool`),
    and kube-scheduler's warnings for GA and deprecated gates set. Raises FeatureGateError."""
    per_component: dict[str, list[str]] = {}
    for value in values:
        for pair in value.split(","):
            if not pair:
                continue
            component, sep, rest = pair.partition(":")
            key, gate = (component.strip(), rest.strip()) if sep else ("", pair.strip())
            per_component.setdefault(key, []).append(gate)
    if "" in per_component and KUBE_COMPONENT in per_component:
        raise FeatureGateError("set kube feature gates with default empty prefix or kube: prefix consistently, "
                               "do not mix use")
    gates: list[str] = []
    for component, given in per_component.items():
        if component not in ("", KUBE_COMPONENT):
            raise FeatureGateError(f"component not registered: {component}")
        gates.extend(given)
    return _set(_parse_pairs(",".join(gates)))


def _parse_pairs(value: str) -> dict[str, bool]:
    """featureGate.Set's parsing: later pairs of a name win."""
    pairs: dict[str, bool] = {}
    for s in value.split(","):
        if not s:
            continue
        name, sep, raw = s.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        raw = raw.strip()
        parsed = _parse_go_bool(raw)
        if parsed is None:
            raise FeatureGateError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing "
                                   f"{_go_quote(raw)}: invalid syntax")
        pairs[name] = parsed
    return pairs


def _set(pairs: Mapping[str, bool]) -> tuple[FeatureGates, list[StageWarning]]:
    """unsafeSetFromMap, then the dependency check."""
    errors: list[str] = []
    warnings: list[StageWarning] = []
    enabled: dict[str, bool] = {}
    special: list[tuple[str, bool]] = []
    for name, value in pairs.items():
        if name in (ALL_ALPHA, ALL_BETA):
            special.append((name, value))
            continue
        spec = GATES.get(name)
        if spec is None:  # the first unknown name ends the check, as upstream
            raise FeatureGateError(_aggregate([*errors, f"unrecognized feature gate: {name}"]))
        default, stage, locked = spec
        if locked and value != default:
            errors.append(f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to "
                          f"{_go_bool(default)}")
            continue
        enabled[name] = value
        if stage in (DEPRECATED, GA):
            kind = "deprecated" if stage == DEPRECATED else "GA"
            warnings.append(StageWarning(f"Warning: setting {kind} feature gate. It will be removed in a future "
                                         "release.", name, value))
    # AllAlpha/AllBeta set the gates of their stage that are not set one by one.
    for name, value in special:
        stage = ALPHA if name == ALL_ALPHA else BETA
        for gate, (_, gate_stage, _) in GATES.items():
            if gate_stage == stage and gate not in pairs:
                enabled[gate] = value
        enabled[name] = value
    if errors:
        raise FeatureGateError(_aggregate(errors))
    gates = FeatureGates(MappingProxyType(enabled))
    for feature, needs in sorted(DEPENDENCIES.items()):
        if gates.enabled(feature):
            off = [dep for dep in needs if not gates.enabled(dep)]
            if off:
                errors.append(f"{feature} is enabled, but depends on features that are disabled: [{' '.join(off)}]")
    if errors:
        raise FeatureGateError(_aggregate(errors))
    return gates, warnings


def _aggregate(errors: Iterable[str]) -> str:
    """utilerrors.NewAggregate's text: one error as itself, several as [a, b]."""
    texts = list(errors)
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _parse_go_bool(text: str) -> bool | None:
    """strconv.ParseBool."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _go_quote(text: str) -> str:
    """Go's %q for the printable strings a command line holds."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
