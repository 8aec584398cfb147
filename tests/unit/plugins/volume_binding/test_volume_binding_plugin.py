"""The VolumeBinding plugin, from kube-scheduler's volume_binding_test.go: PreFilter's verdicts and
messages, Filter through a profile (the batch and per-node paths agree), Score's shape, Reserve /
Unreserve, PreBind's writes and its bounded wait, the args, and the message tail kube-scheduler's
DynamicResources PostFilter adds after an unresolvable PreFilter rejection."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import numpy as np
import pytest

from kubesched.config import ConfigError, loads
from kubesched.config import kube_scheduler_default_plugins as default_plugins
from kubesched.framework import Code, CycleState, FitError, PodInfo, ScheduleResult, build_profile
from kubesched.framework.events import ActionType, EventResource
from kubesched.framework.handle import Handle
from kubesched.framework.profile_config import ProfileConfig
from kubesched.framework.runtime.framework import run_post_filter
from kubesched.framework.status import Status
from kubesched.model.objects import Node, OwnerReference, Pod
from kubesched.model.storage import (
    ANN_BIND_COMPLETED,
    CLAIM_LOST,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.registry import in_tree_registry
from kubesched.plugins.volume_binding import NAME, VolumeBinding, new, parse_args
from kubesched.plugins.volume_binding.scorer import build_scorer
from tests.builders import make_pod, make_pv, term
from tests.unit import volume_fixtures as f
from tests.unit.scheduling_helpers import schedule, snapshot_with
from tests.unit.volume_fixtures import (
    NS,
    bound_pvc,
    immediate_unbound_pvc,
    pv,
    pv_bound,
    pv_node1a,
    pvc,
    unbound_pvc,
)

UU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
NODES = [f.node("node1"), f.node("node2")]


def storage(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume] = ()) -> StaticStorage:  # type: ignore[assignment]
    return StaticStorage(volumes=pvs, claims=claims, classes=f.classes())


def plugin(st: StaticStorage, handle: Handle | None = None, **args: Any) -> VolumeBinding:
    return new(parse_args(args, "", []), handle or Handle(), st)


def pod_with(*claims: str, name: str = "test-pod") -> Pod:
    b = make_pod(name, NS).req(cpu="100m")
    for i, c in enumerate(claims):
        b.volume(f"vol{i}", claim=c)
    return b.obj()


def pre_filter(pl: VolumeBinding, pod: Pod, state: CycleState | None = None) -> Status | None:
    result, status = pl.pre_filter(state or CycleState(), PodInfo(pod), snapshot_with(list(NODES)))
    assert result is None
    return status


def _owned_ephemeral(pod: Pod, owner_uid: str) -> PersistentVolumeClaim:
    claim = pvc(f"{pod.metadata.name}-scratch", "1G", f.BOUND, "pv-bound")
    claim.metadata.owner_references = [OwnerReference(kind="Pod", name=pod.metadata.name, uid=owner_uid,
                                                      controller=True)]
    return claim


def _ephemeral_pod() -> Pod:
    return make_pod("eph", NS).uid("pod-uid").volume("scratch", ephemeral=True).obj()


# --- PreFilter (volume_binding_test.go TestVolumeBinding's PreFilter statuses) -------------------------

@pytest.mark.parametrize(("claims", "pod", "want"), [
    pytest.param([], pod_with("no-such-claim"), 'persistentvolumeclaim "no-such-claim" not found', id="pvc-not-found"),
    pytest.param([pvc("lost", "1G", f.BOUND, "pv-gone")], pod_with("lost"), None, id="bound-claim-passes"),
    pytest.param([immediate_unbound_pvc], pod_with("immediate-unbound-pvc"),
                 "pod has unbound immediate PersistentVolumeClaims", id="unbound-immediate"),
    pytest.param([f.prebound_pvc], pod_with("prebound-pvc"), "pod has unbound immediate PersistentVolumeClaims",
                 id="prebound-counts-as-immediate"),
    pytest.param([], _ephemeral_pod(),
                 'waiting for ephemeral volume controller to create the persistentvolumeclaim "eph-scratch"',
                 id="ephemeral-claim-not-created-yet"),
    pytest.param([_owned_ephemeral(_ephemeral_pod(), "someone-else")], _ephemeral_pod(),
                 "PVC testns/eph-scratch was not created for pod testns/eph (pod is not owner)",
                 id="ephemeral-claim-not-the-pods"),
])
def test_pre_filter_rejections(claims: list[PersistentVolumeClaim], pod: Pod, want: str | None) -> None:
    status = pre_filter(plugin(storage(claims, [pv_bound])), pod)
    assert (None if status is None else (status.code, status.reasons)) == (None if want is None else (UU, (want,)))


def test_lost_and_deleting_claims() -> None:
    lost = pvc("lost", "1G", f.BOUND, "pv-gone")
    lost.status.phase = CLAIM_LOST
    deleting = pvc("deleting", "1G", f.BOUND, "pv-bound")
    deleting.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    pl = plugin(storage([lost, deleting]))
    s = pre_filter(pl, pod_with("lost"))
    assert s is not None
    assert s.reasons == ('persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-gone"',)
    s = pre_filter(pl, pod_with("deleting"))
    assert s is not None
    assert s.reasons == ('persistentvolumeclaim "deleting" is being deleted',)


def test_pod_without_claims_is_skipped() -> None:
    status = pre_filter(plugin(storage([])), make_pod("plain", NS).volume("cache").obj())
    assert status is not None
    assert status.code == Code.SKIP


def test_owned_ephemeral_claim_is_used() -> None:
    pod = _ephemeral_pod()
    assert pre_filter(plugin(storage([_owned_ephemeral(pod, "pod-uid")], [pv_bound])), pod) is None


# --- Filter and Score through the default profile ---------------------------------------------------------

def _profile(st: StaticStorage) -> Any:
    return build_profile(ProfileConfig("kubesched", default_plugins()), in_tree_registry(storage=st))


def _run(st: StaticStorage, pod: Pod, nodes: list[Node] = NODES) -> ScheduleResult | FitError:
    return schedule(list(nodes), pod, profile=_profile(st))


def test_bound_claim_pins_the_pod_to_its_pvs_node() -> None:
    result = _run(storage([bound_pvc], [pv_bound]), pod_with("bound-pvc"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node1"


def test_bound_claim_with_no_fitting_node() -> None:
    away = pv("pv-bound", "node3", "1G", bound_to=bound_pvc)
    result = _run(storage([bound_pvc], [away]), pod_with("bound-pvc"))
    assert isinstance(result, FitError)
    assert result.message() == "0/2 nodes are available: 2 node(s) didn't match PersistentVolume's node affinity."
    assert result.diagnosis.unschedulable_plugins == {NAME}


def test_bound_claim_whose_pv_is_gone() -> None:
    # (In the default profile VolumeZone's PreFilter reports the missing PV first, as in kube-scheduler.)
    pl = plugin(storage([bound_pvc], []))
    state = CycleState()
    pod = PodInfo(pod_with("bound-pvc"))
    snap = snapshot_with(list(NODES))
    assert pl.pre_filter(state, pod, snap)[1] is None
    status = pl.filter(state, pod, snap.node_infos[0])
    assert status == Status(UU, "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)")


def test_wffc_claim_goes_to_the_node_of_a_fitting_pv() -> None:
    result = _run(storage([unbound_pvc], [pv("pv-2", "node2", "5G")]), pod_with("unbound-pvc"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node2"


def test_no_pv_fits_anywhere() -> None:
    result = _run(storage([unbound_pvc], [pv("tiny", "node2", "1M")]), pod_with("unbound-pvc"))
    assert isinstance(result, FitError)
    assert result.message() == "0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind."


FOUR = [f.node(f"node{i}", zone="a" if i < 3 else "b") for i in range(1, 5)]


def _multi_value(name: str, size: str, *nodes: str) -> PersistentVolume:
    return make_pv(name).capacity(size).storage_class(f.WAIT).phase("Available").node_affinity(
        term((f.NODE_LABEL, "In", list(nodes)))).obj()


def _two_terms(name: str, size: str) -> PersistentVolume:
    # node3 by name, or zone a with node2's label: node2 and node3.
    return make_pv(name).capacity(size).storage_class(f.WAIT).phase("Available").node_affinity(
        term((f.NODE_LABEL, "In", ["node3"])), term(("zone", "In", ["a"]), (f.NODE_LABEL, "NotIn", ["node1"]))).obj()


def _with_fields(name: str, size: str, bound_to: PersistentVolumeClaim | None = None) -> PersistentVolume:
    # matchFields on metadata.name: ignored by CheckNodeAffinity, so zone b decides (node3, node4).
    b = make_pv(name).capacity(size).storage_class(f.WAIT).phase("Available").node_affinity(
        term(("zone", "In", ["b"]), fields=(("metadata.name", "In", ["node3"]),)))
    if bound_to is not None:
        b.claim_ref(NS, bound_to.metadata.name, bound_to.metadata.uid)
    return b.obj()
_WFFC_PVS = [pv("a", "node2", "5G"), pv("b", "node1", "10G"), pv("c", "node2", "2G"), pv("d", "node3", "2G"),
             pv("e", "node3", "2000M"), pv("f", "node4", "500M"), pv("g", "", "20G", cls="other")]
_AWAY = pv("pv-bound", "node3", "1G", bound_to=bound_pvc)


@pytest.mark.parametrize(("claims", "pvs", "volumes"), [
    pytest.param([bound_pvc], [pv_bound], ["bound-pvc"], id="bound"),
    pytest.param([bound_pvc], [_AWAY], ["bound-pvc"], id="bound-elsewhere"),
    pytest.param([bound_pvc], [], ["bound-pvc"], id="bound-pv-gone"),
    pytest.param([unbound_pvc], _WFFC_PVS, ["unbound-pvc"], id="wffc-smallest-per-node"),
    pytest.param([unbound_pvc, bound_pvc], [*_WFFC_PVS, _AWAY], ["bound-pvc", "unbound-pvc"], id="bound-and-wffc"),
    pytest.param([unbound_pvc, bound_pvc], _WFFC_PVS, ["bound-pvc", "unbound-pvc"], id="wffc-and-gone-pv"),
    pytest.param([pvc("big", "15G")], _WFFC_PVS, ["big"], id="wffc-nothing-fits"),
    pytest.param([unbound_pvc], [*_WFFC_PVS, _multi_value("h", "3G", "node1", "node4"), _two_terms("i", "3G")],
                 ["unbound-pvc"], id="wffc-multi-value-and-two-terms"),
    pytest.param([unbound_pvc], [_two_terms("j", "5G"), pv("k", "", "5G"), _multi_value("l", "5G", "node4")],
                 ["unbound-pvc"], id="wffc-tie-across-shapes-and-everywhere"),
    pytest.param([unbound_pvc], [_with_fields("m", "3G"), pv("n", "node2", "4G")], ["unbound-pvc"],
                 id="wffc-match-fields-are-not-checked"),
    pytest.param([bound_pvc], [_with_fields("pv-bound", "1G", bound_to=bound_pvc)], ["bound-pvc"],
                 id="bound-match-fields-are-not-checked"),
    # Per node (the batch declines these shapes): two claims, a provisioning class, a pre-bound PV.
    pytest.param([unbound_pvc, f.unbound_pvc2], _WFFC_PVS, ["unbound-pvc", "unbound-pvc2"], id="two-wffc"),
    pytest.param([f.provisioned_pvc], [], ["provisioned-pvc"], id="provisioning"),
    pytest.param([unbound_pvc], [*_WFFC_PVS, pv("pre", "node4", "9G", bound_to=unbound_pvc)], ["unbound-pvc"],
                 id="prebound-pv"),
])
def test_batch_and_per_node_filters_agree(claims: list[PersistentVolumeClaim], pvs: list[PersistentVolume],
                                          volumes: list[str]) -> None:
    pl = plugin(storage(claims, pvs))
    pod = PodInfo(pod_with(*volumes))
    snap = snapshot_with(list(FOUR))
    batch_state, node_state = CycleState(), CycleState()
    assert pl.pre_filter(batch_state, pod, snap)[1] is None
    assert pl.pre_filter(node_state, pod, snap)[1] is None
    mask = pl.filter_batch(batch_state, pod, snap, snap.all_rows)
    assert mask is not None
    per_node = [pl.filter(node_state, pod, ni) for ni in snap.node_infos]
    assert [bool(x) for x in mask] == [s is None for s in per_node]
    rejected = np.flatnonzero(~mask)
    assert pl.filter_statuses(batch_state, pod, snap, rejected) == [per_node[r] for r in rejected.tolist()]

    def chosen(state: CycleState) -> dict[str, list[tuple[str, str]]]:
        by_node = state.read(NAME).by_node
        return {n: [(b.pvc.metadata.name, b.pv.metadata.name) for b in v.static_bindings]
                for n, v in by_node.items() if v.static_bindings}
    assert chosen(batch_state) == chosen(node_state)


@pytest.mark.parametrize(("shape", "requested", "capacity", "want"), [
    # kube-scheduler's default shape (0, 10), (100, 0): the less utilized, the higher.
    pytest.param(None, 1, 2, 50, id="half-used"),
    pytest.param(None, 1, 10, 90, id="tenth-used"),
    pytest.param(None, 3, 2, 0, id="over-capacity"),
    pytest.param(None, 1, 0, 0, id="zero-capacity"),
    pytest.param([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}], 1, 2, 50, id="inverse"),
    pytest.param([{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}], 1, 4, 25, id="inverse-quarter"),
])
def test_score_shape(shape: list[dict[str, int]] | None, requested: int, capacity: int, want: int) -> None:
    scorer = build_scorer(shape or parse_args({}, "", [])["shape"])
    assert scorer({"sc": [requested, capacity]}) == want


def test_score_averages_classes_rounding_half_up() -> None:
    scorer = build_scorer(parse_args({}, "", [])["shape"])
    assert scorer({"a": [1, 2], "b": [1, 1]}) == 25  # (50 + 0) / 2
    assert scorer({"a": [1, 2], "b": [1, 4], "c": [0, 1]}) == 75  # round(225 / 3)
    assert scorer({}) == 0


def test_wffc_node_choice_prefers_the_least_utilized_pv() -> None:
    # Same node resources; the 10G PV on node2 leaves the 1G claim at 10 % utilization.
    st = storage([unbound_pvc], [pv("pv-1", "node1", "2G"), pv("pv-2", "node2", "10G")])
    result = _run(st, pod_with("unbound-pvc"))
    assert isinstance(result, ScheduleResult)
    assert result.suggested_host == "node2"


# --- Reserve, Unreserve, PreBind ----------------------------------------------------------------------------

class FakeCluster:
    """The handle's write ports over a StaticStorage, with a PV controller that binds a claim to its
    PV `delay` sleeps after the PV's claimRef was written."""

    def __init__(self, st: StaticStorage, pod: Pod, delay: int = 2, fail_write: str | None = None) -> None:
        self.st = st
        self.delay = delay
        self.fail_write = fail_write
        self.now = 0.0
        self.writes: list[str] = []
        self.pending: list[tuple[int, str, str]] = []
        self.pods = StaticPods(pod)

    def handle(self) -> Handle:
        return Handle(clock=lambda: self.now, pods=self.pods, nodes=StaticNodes(), write_volume=self.write_volume,
                      write_claim=self.write_claim, sleep=self.sleep)

    async def write_volume(self, volume: PersistentVolume) -> PersistentVolume | Status:
        self.writes.append(f"pv/{volume.metadata.name}")
        if self.fail_write:
            return Status(Code.ERROR, self.fail_write)
        written = msgspec.structs.replace(volume, metadata=msgspec.structs.replace(
            volume.metadata, resource_version=str(int(volume.metadata.resource_version) + 1)))
        self.st.volumes[volume.metadata.name] = written
        ref = volume.spec.claim_ref
        assert ref is not None
        self.pending.append((self.delay, f"{ref.namespace}/{ref.name}", volume.metadata.name))
        return written

    async def write_claim(self, claim: PersistentVolumeClaim) -> PersistentVolumeClaim | Status:
        self.writes.append(f"pvc/{claim.metadata.name}")
        return claim

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        still = []
        for left, key, pv_name in self.pending:
            if left <= 1:
                claim = self.st.claims[key]
                meta = msgspec.structs.replace(claim.metadata, annotations={ANN_BIND_COMPLETED: "yes"},
                                               resource_version="9")
                self.st.claims[key] = msgspec.structs.replace(
                    claim, metadata=meta, spec=msgspec.structs.replace(claim.spec, volume_name=pv_name))
            else:
                still.append((left - 1, key, pv_name))
        self.pending = still


class StaticPods:
    def __init__(self, *pods: Pod) -> None:
        self.by_key = {f"{p.metadata.namespace}/{p.metadata.name}": p for p in pods}

    def get(self, key: str) -> Pod | None:
        return self.by_key.get(key)

    def list(self) -> list[Pod]:
        return list(self.by_key.values())


class StaticNodes:
    def get(self, key: str) -> Node | None:
        return next((n for n in NODES if n.metadata.name == key), None)

    def list(self) -> list[Node]:
        return list(NODES)


def _cycle(pl: VolumeBinding, pod: Pod, node_name: str = "node1") -> CycleState:
    state = CycleState()
    info = PodInfo(pod)
    snap = snapshot_with(list(NODES))
    assert pl.pre_filter(state, info, snap)[1] is None
    for ni in snap.node_infos:
        pl.filter(state, info, ni)
    assert pl.reserve(state, info, node_name) is None
    return state


def test_pre_bind_writes_the_claim_ref_and_waits_for_the_pv_controller() -> None:
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod, delay=3)
    pl = plugin(st, cluster.handle())
    state = _cycle(pl, pod)
    assert asyncio.run(pl.pre_bind(state, PodInfo(pod), "node1")) is None
    assert cluster.writes == ["pv/pv-node1a"]
    assert st.claims[f"{NS}/unbound-pvc"].spec.volume_name == "pv-node1a"
    assert 0 < cluster.now < 5


def test_pre_bind_times_out() -> None:
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod, delay=10_000)
    pl = plugin(st, cluster.handle(), bindTimeoutSeconds=2)
    status = asyncio.run(pl.pre_bind(_cycle(pl, pod), PodInfo(pod), "node1"))
    assert status == Status(Code.ERROR, "binding volumes: context deadline exceeded")
    assert 2 <= cluster.now < 3


def test_failed_stages_are_counted_for_the_metric() -> None:
    """scheduler_volume_scheduling_stage_error_total: "bind" when PreBind fails, "predicate" when
    FindPodVolumes fails (here: the provisioning claim's class deleted after PreFilter)."""
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod, delay=10_000)
    handle = cluster.handle()
    failed: list[str] = []
    handle.volume_stage_failed = failed.append
    pl = plugin(st, handle, bindTimeoutSeconds=1)
    assert asyncio.run(pl.pre_bind(_cycle(pl, pod), PodInfo(pod), "node1")) is not None
    assert failed == ["bind"]
    provisioning = pod_with("provisioned-pvc")
    st.claims[f"{NS}/provisioned-pvc"] = f.provisioned_pvc
    state = _prefiltered(pl, provisioning)
    st.classes.clear()
    status = pl.filter(state, PodInfo(provisioning), snapshot_with(list(NODES)).node_infos[0])
    assert status == Status(Code.ERROR, 'failed to find storage class "waitClassWithProvisioner"')
    assert failed == ["bind", "predicate"]


def test_pre_bind_write_failure_rolls_the_cache_back() -> None:
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod, fail_write="Operation cannot be fulfilled: the object has been modified")
    pl = plugin(st, cluster.handle())
    status = asyncio.run(pl.pre_bind(_cycle(pl, pod), PodInfo(pod), "node1"))
    assert status == Status(Code.ERROR, "Operation cannot be fulfilled: the object has been modified")
    assert pl.binder.pv_cache.assumed == {}


def test_pre_bind_stops_when_the_pod_is_gone() -> None:
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod)
    cluster.pods.by_key.clear()
    pl = plugin(st, cluster.handle())
    status = asyncio.run(pl.pre_bind(_cycle(pl, pod), PodInfo(pod), "node1"))
    assert status == Status(Code.ERROR, 'binding volumes: pod does not exist any more: pods "test-pod" not found')


def test_pre_bind_notices_a_reset_claim_ref() -> None:
    st = storage([unbound_pvc], [pv_node1a])
    pod = pod_with("unbound-pvc")
    cluster = FakeCluster(st, pod, delay=10_000)
    pl = plugin(st, cluster.handle())
    state = _cycle(pl, pod)

    async def reset_after_write(seconds: float) -> None:
        cluster.now += seconds
        written = st.volumes["pv-node1a"]
        st.volumes["pv-node1a"] = msgspec.structs.replace(written, spec=msgspec.structs.replace(
            written.spec, claim_ref=None), metadata=msgspec.structs.replace(written.metadata, resource_version="7"))

    pl.waiter.sleep = reset_after_write
    status = asyncio.run(pl.pre_bind(state, PodInfo(pod), "node1"))
    assert status == Status(Code.ERROR, 'binding volumes: ClaimRef got reset for pv "pv-node1a"')


def test_all_bound_pod_needs_no_pre_bind() -> None:
    st = storage([bound_pvc], [pv_bound])
    pod = pod_with("bound-pvc")
    cluster = FakeCluster(st, pod)
    pl = plugin(st, cluster.handle())
    state = _cycle(pl, pod)
    assert asyncio.run(pl.pre_bind(state, PodInfo(pod), "node1")) is None
    assert cluster.writes == []


@pytest.mark.parametrize(("claims", "pvs", "node", "want"), [
    pytest.param(["unbound-pvc"], [pv_node1a], "node1", None, id="a-pv-to-bind"),
    pytest.param(["bound-pvc"], [pv_bound], "node1", Status(Code.SKIP), id="all-bound"),
    pytest.param([], [], "node1", Status(Code.SKIP), id="no-claims"),
    pytest.param(["unbound-pvc"], [pv_node1a], "node9",
                 Status(Code.ERROR, 'no pod volume found for node "node9"'), id="not-the-filtered-node"),
])
def test_pre_bind_pre_flight_says_whether_pre_bind_has_work(claims: list[str], pvs: list[PersistentVolume],
                                                            node: str, want: Status | None) -> None:
    st = storage([c for c in (unbound_pvc, bound_pvc) if c.metadata.name in claims], pvs)
    pod = pod_with(*claims)
    pl = plugin(st)
    if claims:
        state = _cycle(pl, pod)
    else:  # PreFilter skips the pod; Reserve still runs
        state = _prefiltered(pl, pod)
        assert pl.reserve(state, PodInfo(pod), node) is None
    result, status = pl.pre_bind_pre_flight(state, PodInfo(pod), node)
    assert result is not None
    assert result.allow_parallel
    assert status == want


def test_pre_bind_pre_flight_without_the_pre_filter_state_is_an_error() -> None:
    _, status = plugin(storage([])).pre_bind_pre_flight(CycleState(), PodInfo(pod_with()), "node1")
    assert status == Status(Code.ERROR, 'reading "VolumeBinding" from cycleState: not found')


def test_unreserve_frees_the_pv_for_the_next_pod() -> None:
    other = pvc("other", "1G")
    st = storage([unbound_pvc, other], [pv_node1a])
    pl = plugin(st)
    pod = pod_with("unbound-pvc")
    state = _cycle(pl, pod)
    assert pl.filter(_prefiltered(pl, pod_with("other", name="p2")), PodInfo(pod_with("other", name="p2")),
                     snapshot_with(list(NODES)).node_infos[0]) is not None
    pl.unreserve(state, PodInfo(pod), "node1")
    assert pl.filter(_prefiltered(pl, pod_with("other", name="p2")), PodInfo(pod_with("other", name="p2")),
                     snapshot_with(list(NODES)).node_infos[0]) is None


def _prefiltered(pl: VolumeBinding, pod: Pod) -> CycleState:
    state = CycleState()
    pl.pre_filter(state, PodInfo(pod), snapshot_with(list(NODES)))
    return state


def test_events_to_register_are_kube_schedulers() -> None:
    add_update = ActionType.ADD | ActionType.UPDATE
    # (resource, actions, has a queueing hint), as kube-scheduler registers them
    assert [(e.event.resource, e.event.action_type, e.hint is not None)
            for e in plugin(storage([])).events_to_register()] == [
        (EventResource.STORAGE_CLASS, add_update, True), (EventResource.PERSISTENT_VOLUME_CLAIM, add_update, True),
        (EventResource.PERSISTENT_VOLUME, add_update, False),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL, False),
        (EventResource.CSI_NODE, add_update, True), (EventResource.CSI_DRIVER, ActionType.UPDATE, True),
        (EventResource.CSI_STORAGE_CAPACITY, add_update, True)]


# --- args -----------------------------------------------------------------------------------------------------

def _config(args: str) -> str:
    return ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
            f"profiles:\n  - pluginConfig:\n      - name: VolumeBinding\n        args:\n{args}")


@pytest.mark.parametrize(("args", "want"), [
    pytest.param("          {}\n", {"bindTimeoutSeconds": 600, "shape": [{"utilization": 0, "score": 10},
                                                                        {"utilization": 100, "score": 0}]},
                 id="defaults"),
    pytest.param("          bindTimeoutSeconds: 0\n          shape:\n            - utilization: 0\n"
                 "              score: 0\n            - utilization: 80\n              score: 7\n",
                 {"bindTimeoutSeconds": 0, "shape": [{"utilization": 0, "score": 0}, {"utilization": 80, "score": 7}]},
                 id="given"),
])
def test_args(args: str, want: dict[str, Any]) -> None:
    assert loads(_config(args)).profiles[0].plugin_args[NAME] == want


@pytest.mark.parametrize(("args", "want"), [
    pytest.param("          bindTimeoutSeconds: -1\n",
                 "profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, "
                 "should not be a negative value", id="negative-timeout"),
    pytest.param("          shape:\n            - utilization: 50\n              score: 1\n"
                 "            - utilization: 10\n              score: 2\n",
                 "profiles[0].pluginConfig[0].args.shape[1].utilization: Invalid value: 10: values must be sorted "
                 "in increasing order", id="unsorted-shape"),
    pytest.param("          shape:\n            - utilization: 0\n              score: 11\n",
                 "profiles[0].pluginConfig[0].args.shape[0].score: Invalid value: 11: not in valid range [0, 10]",
                 id="score-out-of-range"),
    pytest.param("          timeout: 3\n", "profiles[0].pluginConfig[0].args.timeout: Unknown field", id="unknown"),
])
def test_bad_args_name_the_field(args: str, want: str) -> None:
    with pytest.raises(ConfigError) as info:
        loads(_config(args))
    assert want in str(info.value)


# --- the PostFilter tail of kube-scheduler's DynamicResources ----------------------------------------------

def test_unresolvable_pre_filter_rejection_ends_in_not_found() -> None:
    # kube-scheduler v1.37 writes "0/4 nodes are available: persistentvolumeclaim "x" not found. not found"
    # (seen on the plane): its DynamicResources PostFilter (kubesched's stand-in) finds no state and
    # ends the PostFilter run.
    result = _run(storage([]), pod_with("x"))
    assert isinstance(result, FitError)
    status = run_post_filter(_profile(storage([])), CycleState(), result.pod, result)
    assert status is not None
    assert status.code == Code.ERROR
    assert result.message() == '0/2 nodes are available: persistentvolumeclaim "x" not found. not found'
