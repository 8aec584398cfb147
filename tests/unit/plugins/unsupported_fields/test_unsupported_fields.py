"""UnsupportedPodFields: pods that need a plugin kubesched lacks stay Pending, naming each field.
No field is left: pod (anti-)affinity, topology spread constraints, PVC and ephemeral volumes and
DRA's resourceClaims are evaluated by InterPodAffinity, PodTopologySpread, VolumeBinding and
DynamicResources, and the old names still load."""

from __future__ import annotations

import logging
from typing import Any

import msgspec
import pytest

from kubesched.config import ConfigError, load, loads
from kubesched.config import kube_scheduler_default_plugins as default_plugins
from kubesched.framework import Code, CycleState, FitError, PodInfo, ScheduleResult, build_profile
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.model.decode import TolerantDecoder
from kubesched.model.objects import (
    Affinity,
    Container,
    Node,
    Pod,
    PodAffinity,
    PodResourceClaim,
    ResourceClaimRef,
    ResourceRequirements,
)
from kubesched.plugins import unsupported_fields
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.unsupported_fields import FIELDS as UNSUPPORTED_POD_FIELDS
from kubesched.plugins.unsupported_fields import NAME, RETIRED_FIELDS, UnsupportedPodFields
from tests.builders import NodeBuilder, PodBuilder, label_selector, make_node, make_pod
from tests.unit.scheduling_helpers import default_profile, schedule, snapshot_with

UNRESOLVABLE = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NOT_YET = ", which kubesched does not evaluate yet"


def _empty_pod_affinity() -> PodBuilder:
    b = make_pod("p")
    b.obj().spec.affinity = Affinity(pod_affinity=PodAffinity(), pod_anti_affinity=PodAffinity())
    return b


def _claims(*, pod_level: bool = False, init: bool = False) -> PodBuilder:
    b = make_pod("p")
    spec = b.obj().spec
    spec.resource_claims = [PodResourceClaim(name="gpu", resource_claim_template_name="one-gpu")]
    spec.containers[0].resources.claims = [ResourceClaimRef(name="gpu")]
    if init:
        spec.init_containers = [Container(name="i", resources=ResourceRequirements(claims=[ResourceClaimRef("gpu")]))]
    if pod_level:
        spec.resources = ResourceRequirements(claims=[ResourceClaimRef(name="gpu")])
    return b


def _claims_only() -> PodBuilder:
    b = make_pod("p")
    b.obj().spec.resource_claims = [PodResourceClaim(name="gpu", resource_claim_name="shared-gpu")]
    return b


def run(plugin: UnsupportedPodFields, pod: PodBuilder) -> tuple[Code, tuple[str, ...]] | None:
    result, status = plugin.pre_filter(CycleState(), PodInfo(pod.obj()), snapshot_with([make_node("n")]))
    assert result is None  # it never narrows the nodes, only rejects
    return None if status is None else (status.code, status.reasons)


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(make_pod("p"), None, id="none"),
    pytest.param(make_pod("p").required("zone", "In", "a").node_selector(disk="ssd").volume("cache"), None,
                 id="node-affinity-and-plain-volume-pass"),
    pytest.param(_empty_pod_affinity(), None, id="empty-pod-affinity-asks-nothing"),
    # InterPodAffinity evaluates these now.
    pytest.param(make_pod("p").pod_affinity(app="db"), None, id="pod-affinity-passes"),
    pytest.param(make_pod("p").pod_affinity(preferred=True, app="db"), None, id="preferred-pod-affinity-passes"),
    pytest.param(make_pod("p").pod_affinity(anti=True, app="web"), None, id="pod-anti-affinity-passes"),
    pytest.param(make_pod("p").pod_affinity(anti=True, preferred=True, app="web"), None,
                 id="preferred-pod-anti-affinity-passes"),
    # PodTopologySpread evaluates these now.
    pytest.param(make_pod("p").spread(), None, id="topology-spread-passes"),
    pytest.param(make_pod("p").spread(when_unsatisfiable="ScheduleAnyway"), None,
                 id="topology-spread-schedule-anyway-passes"),
    # VolumeBinding evaluates these now.
    pytest.param(make_pod("p").volume("cache").volume("data", claim="data-0"), None, id="pvc-passes"),
    pytest.param(make_pod("p").volume("scratch", ephemeral=True), None, id="ephemeral-passes"),
    pytest.param(make_pod("p").volume("data", claim="d").volume("s", ephemeral=True).spread()
                 .pod_affinity(anti=True, app="x").pod_affinity(app="y"), None, id="all-pass"),
    # DynamicResources evaluates these now.
    pytest.param(_claims_only(), None, id="resource-claims-pass"),
    pytest.param(_claims(), None, id="resource-claims-and-container-claims-pass"),
    pytest.param(_claims(pod_level=True, init=True), None, id="every-place-a-claim-is-named-passes"),
])
def test_reject(pod: PodBuilder, want: str | None) -> None:
    assert run(UnsupportedPodFields(), pod) == (None if want is None else (UNRESOLVABLE, (want,)))


def test_reason_names_every_field() -> None:
    # For a field that may come: one sentence naming them all.
    assert unsupported_fields.reason(["spec.a"]) == "pod uses spec.a" + NOT_YET
    assert unsupported_fields.reason(["spec.a", "spec.b", "spec.c"]) == "pod uses spec.a, spec.b and spec.c" + NOT_YET


_ALL = (_claims().pod_affinity(app="y").pod_affinity(anti=True, app="x").spread().volume("d", claim="d")
        .volume("e", ephemeral=True))


@pytest.mark.parametrize("ignored", [{"persistentVolumeClaim"}, {"ephemeral"}, {"resourceClaims"},
                                     set(RETIRED_FIELDS)])
def test_retired_names_are_accepted_and_change_nothing(ignored: set[str], caplog: pytest.LogCaptureFixture) -> None:
    plugin = unsupported_fields.new({"ignoredFields": sorted(ignored)})
    with caplog.at_level(logging.WARNING, logger=unsupported_fields.__name__):
        assert run(plugin, _ALL) is None
    assert not [r for r in caplog.records if r.name == unsupported_fields.__name__]


def test_only_its_own_update_requeues_the_pod() -> None:
    assert UnsupportedPodFields().events_to_register() == (ClusterEvent(EventResource.TARGET_POD, ActionType.UPDATE),)


def test_a_pod_with_claims_is_dynamic_resources_pod() -> None:
    # Its claim's template has not been made into a claim yet: DynamicResources' PreFilter says so,
    # in kube-scheduler's words (PreEnqueue, not run by this cycle, would have held it back).
    result = _cycle(_claims().req(cpu="1"))
    assert isinstance(result, FitError)
    assert result.message() == '0/4 nodes are available: pod "default/p": ResourceClaim not created yet.'
    assert result.diagnosis.unschedulable_plugins == {"DynamicResources"}


def test_field_names_agree_with_the_config_parser() -> None:
    assert unsupported_fields.FIELDS == UNSUPPORTED_POD_FIELDS


@pytest.mark.parametrize("field", ["podAffinities", "podAffinity", "podAntiAffinity", "topologySpreadConstraints"])
def test_factory_refuses_an_unknown_field(field: str) -> None:
    with pytest.raises(ValueError, match=field):
        unsupported_fields.new({"ignoredFields": [field]})


# --- in the default profile -------------------------------------------------------------------------

def test_default_profile_runs_it_at_pre_filter() -> None:
    assert NAME in [ref.name for ref in default_plugins()["preFilter"]]
    assert NAME in [pl.name for pl in default_profile().pre_filter]
    assert load(None).profiles[0].plugin_args[NAME] == {"ignoredFields": []}


def test_users_kube_scheduler_config_keeps_it() -> None:
    # A kube-scheduler file that names plugins again: InterPodAffinity, PodTopologySpread and
    # VolumeBinding are implemented, so they stay where they are, and nothing is unimplemented.
    config = loads("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n  - schedulerName: default-scheduler\n    plugins:\n      multiPoint:\n"
                   "        enabled:\n          - name: InterPodAffinity\n          - name: PodTopologySpread\n"
                   "          - name: VolumeBinding\n")
    pre_filter = [ref.name for ref in config.profiles[0].plugins["preFilter"]]
    assert NAME in pre_filter
    assert pre_filter[pre_filter.index(NAME):] == [NAME, "VolumeBinding", "VolumeZone", "PodTopologySpread",
                                                   "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]
    assert config.unimplemented == ()


def _cycle(pod: PodBuilder, **args: dict[str, Any]) -> ScheduleResult | FitError:
    nodes: list[Node | NodeBuilder] = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110")
                                       for i in range(4)]
    return schedule(nodes, pod, profile=default_profile(**args))


def test_a_missing_claim_is_reported_as_kube_scheduler_reports_it() -> None:
    # VolumeRestrictions' PreFilter, before VolumeBinding's, looks the claim up first.
    result = _cycle(make_pod("p").req(cpu="1").volume("data", claim="d"))
    assert isinstance(result, FitError)
    assert result.message() == '0/4 nodes are available: persistentvolumeclaim "d" not found.'
    assert result.diagnosis.unschedulable_plugins == {"VolumeRestrictions"}


def _hosts() -> list[Node | NodeBuilder]:
    return [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="110").label("kubernetes.io/hostname", f"n{i}")
            for i in range(4)]


def test_pod_affinity_is_evaluated_not_rejected() -> None:
    # The first pod of a self-affine group may go to any node with the topology label
    # (InterPodAffinity's rule); a pod whose terms no pod matches goes nowhere.
    result = schedule(_hosts(), make_pod("p").req(cpu="1").labels(app="web").pod_affinity(app="web"))
    assert isinstance(result, ScheduleResult)
    result = schedule(_hosts(), make_pod("p").req(cpu="1").pod_affinity(app="db"))
    assert isinstance(result, FitError)
    assert result.message() == "0/4 nodes are available: 4 node(s) didn't match pod affinity rules."
    assert result.diagnosis.unschedulable_plugins == {"InterPodAffinity"}


def test_profile_without_inter_pod_affinity_ignores_pod_affinity() -> None:
    # As in kube-scheduler: a profile that disables the plugin places the pod as if it had no terms.
    config = loads("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                   "profiles:\n  - plugins:\n      multiPoint:\n        disabled:\n"
                   "          - name: InterPodAffinity\n")
    profile = build_profile(config.profiles[0], in_tree_registry())
    result = schedule(_hosts(), make_pod("p").req(cpu="1").pod_affinity(app="db"), profile=profile)
    assert isinstance(result, ScheduleResult)


def test_topology_spread_is_evaluated_not_rejected() -> None:
    # A spread pod is placed by PodTopologySpread's rules; a hard constraint over a label no node has
    # fits nowhere, with PodTopologySpread's reason, not UnsupportedPodFields'.
    result = schedule(_hosts(), make_pod("p").req(cpu="1").labels(app="web")
                      .spread(1, "kubernetes.io/hostname", selector=label_selector(app="web")))
    assert isinstance(result, ScheduleResult)
    result = schedule(_hosts(), make_pod("p").req(cpu="1").spread(1, "zone", selector=label_selector(app="web")))
    assert isinstance(result, FitError)
    assert result.diagnosis.unschedulable_plugins == {"PodTopologySpread"}


def test_plain_pod_is_scheduled() -> None:
    assert isinstance(_cycle(make_pod("p").req(cpu="1")), ScheduleResult)


# --- args validation ---------------------------------------------------------------------------------

def _config(args: str) -> str:
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            f"profiles:\n  - pluginConfig:\n      - name: UnsupportedPodFields\n        args:\n{args}")


@pytest.mark.parametrize(("args", "want"), [
    pytest.param("          ignoredFields: [ephemeral, persistentVolumeClaim]\n",
                 {"ignoredFields": ["ephemeral", "persistentVolumeClaim"]}, id="two"),
    pytest.param("          ignoredFields: []\n", {"ignoredFields": []}, id="empty"),
    pytest.param("          ignoredFields: null\n", {"ignoredFields": []}, id="null"),
    pytest.param("          {}\n", {"ignoredFields": []}, id="none"),
])
def test_args(args: str, want: dict[str, Any]) -> None:
    assert loads(_config(args)).profiles[0].plugin_args[NAME] == want


@pytest.mark.parametrize(("args", "want"), [
    pytest.param("          ignoredFields: [ephemeral, podAffinities]\n",
                 'profiles[0].pluginConfig[0].args.ignoredFields[1]: Unsupported value: "podAffinities": '
                 'supported values: "persistentVolumeClaim", "ephemeral", "resourceClaims"', id="unknown-field"),
    pytest.param("          ignoredFields: [topologySpreadConstraints]\n",
                 'profiles[0].pluginConfig[0].args.ignoredFields[0]: Unsupported value: '
                 '"topologySpreadConstraints": supported values: "persistentVolumeClaim", "ephemeral", '
                 '"resourceClaims"',
                 id="spread-is-no-longer-a-field"),
    pytest.param("          ignoredFields: [podAntiAffinity]\n",
                 'profiles[0].pluginConfig[0].args.ignoredFields[0]: Unsupported value: "podAntiAffinity": '
                 'supported values: "persistentVolumeClaim", "ephemeral", "resourceClaims"',
                 id="pod-anti-affinity-is-no-field-now"),
    pytest.param("          ignoredFields: [ephemeral, ephemeral]\n",
                 'profiles[0].pluginConfig[0].args.ignoredFields[1]: Duplicate value: "ephemeral"', id="duplicate"),
    pytest.param("          ignoredFields: [3]\n", "profiles[0].pluginConfig[0].args.ignoredFields[0]",
                 id="not-a-string"),
    pytest.param("          mode: Ignore\n", "profiles[0].pluginConfig[0].args.mode: Unknown field",
                 id="unknown-arg"),
])
def test_bad_args_name_the_field(args: str, want: str) -> None:
    with pytest.raises(ConfigError) as info:
        loads(_config(args))
    assert want in str(info.value)


# --- the slim pod model --------------------------------------------------------------------------------

@pytest.mark.parametrize(("spec", "found"), [
    pytest.param({}, [], id="absent"),
    pytest.param({"topologySpreadConstraints": None, "volumes": None}, [], id="null"),
    pytest.param({"topologySpreadConstraints": [], "volumes": []}, [], id="empty"),
    pytest.param({"volumes": [{"name": "t", "projected": {"sources": []}},
                              {"name": "c", "persistentVolumeClaim": None}]}, [], id="other-sources-and-null-pvc"),
    pytest.param({"volumes": [{"name": "t", "emptyDir": None},
                              {"name": "d", "persistentVolumeClaim": {"claimName": "d", "readOnly": True}}]},
                 [], id="pvc-after-null-source"),
    pytest.param({"volumes": [{"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}]},
                 [], id="ephemeral"),
    pytest.param({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                                                 "whenUnsatisfiable": "DoNotSchedule", "labelSelector": None}]},
                 [], id="spread-is-evaluated"),
    pytest.param({"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": None}}}, [],
                 id="null-terms"),
    pytest.param({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}]}}}, [],
                 id="pod-affinity-is-evaluated"),
    pytest.param({"resourceClaims": None, "containers": [{"name": "c", "resources": {"claims": None}}]}, [],
                 id="null-claims"),
    pytest.param({"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}],
                  "containers": [{"name": "a"}, {"name": "b", "resources": {"claims": [{"name": "gpu"}]}}]},
                 [], id="resource-claims-are-evaluated"),
])
def test_decode(spec: dict[str, Any], found: list[str]) -> None:
    pod = TolerantDecoder(Pod).decode(msgspec.json.encode({"metadata": {"name": "p"}, "spec": spec}))
    assert [path for _, path in unsupported_fields.unsupported_fields(pod)] == found


def test_a_config_without_it_is_warned_about() -> None:
    from kubesched.cmd.run import unguarded_profiles

    head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
    config = loads(head + "  - schedulerName: guarded\n"
                          "  - schedulerName: bare\n    plugins:\n      preFilter:\n        disabled:\n"
                          "          - name: UnsupportedPodFields\n")
    # No field is unsupported, so a profile without the guard misplaces nothing.
    assert unguarded_profiles(config) == []
    assert unguarded_profiles(load(None)) == []
