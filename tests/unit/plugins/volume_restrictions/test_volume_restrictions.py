"""VolumeRestrictions: kube-scheduler's volume_restrictions_test.go cases (GCE PD, AWS EBS, RBD, ISCSI
disk conflicts; ReadWriteOncePod access-mode conflicts), plus preemption's AddPod / RemovePod."""

from __future__ import annotations

import pytest

from kubesched.framework import Code, CycleState, PodInfo
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import Pod, Volume
from kubesched.model.storage import READ_WRITE_MANY, READ_WRITE_ONCE_POD
from kubesched.model.volume_sources import (
    AWSElasticBlockStoreVolumeSource,
    GCEPersistentDiskVolumeSource,
    ISCSIVolumeSource,
    RBDVolumeSource,
)
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.volume_restrictions import (
    REASON_DISK_CONFLICT,
    REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
)
from kubesched.plugins.volume_restrictions.plugin import (
    PRE_FILTER_KEY,
    PreFilterState,
    after_assigned_pod_deleted,
    after_claim_added,
)
from tests.builders import make_node, make_pod, make_pvc
from tests.unit.scheduling_helpers import snapshot_with

SKIP = "skip"
DISK = Status(Code.UNSCHEDULABLE, REASON_DISK_CONFLICT)
RWOP = Status(Code.UNSCHEDULABLE, REASON_READ_WRITE_ONCE_POD_CONFLICT)


def _gce(pd: str, read_only: bool = False) -> Volume:
    return Volume(name="v", gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name=pd, read_only=read_only))


def _ebs(volume_id: str) -> Volume:
    return Volume(name="v", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=volume_id))


def _rbd(*monitors: str, pool: str = "foo", image: str = "bar", read_only: bool = False) -> Volume:
    return Volume(name="v", rbd=RBDVolumeSource(monitors=list(monitors), pool=pool, image=image,
                                                  read_only=read_only))


def _iscsi(iqn: str, read_only: bool = False) -> Volume:
    return Volume(name="v", iscsi=ISCSIVolumeSource(target_portal="127.0.0.1:3260", iqn=iqn, read_only=read_only))


def _pod(*volumes: Volume, name: str = "p") -> Pod:
    b = make_pod(name)
    for v in volumes:
        b.add_volume(v)
    return b.obj()


def _run(plugin: VolumeRestrictions, pod: Pod, existing: list[Pod],
         all_pods: list[Pod] | None = None) -> tuple[Status | str | None, Status | None]:
    """(PreFilter status or "skip", Filter status on a node holding `existing`)."""
    node = make_node("node-1").obj()
    snapshot = snapshot_with([node], [_on(p, "node-1") for p in (all_pods if all_pods is not None else existing)])
    state = CycleState()
    _, pre = plugin.pre_filter(state, PodInfo(pod), snapshot)
    if pre is not None and pre.is_skip():
        return SKIP, None
    if pre is not None:
        return pre, None
    return None, plugin.filter(state, PodInfo(pod), NodeInfo(node, [_on(p, "node-1") for p in existing]))


def _on(pod: Pod, node: str) -> Pod:
    pod.spec.node_name = node
    return pod


@pytest.mark.parametrize(("pod", "existing", "want_pre", "want"), [
    # TestGCEDiskConflicts
    pytest.param(_pod(), [], SKIP, None, id="gce-nothing"),
    pytest.param(_pod(), [_pod(_gce("foo"))], SKIP, None, id="gce-one-state"),
    pytest.param(_pod(_gce("foo")), [_pod(_gce("foo"))], None, DISK, id="gce-same-state"),
    pytest.param(_pod(_gce("bar")), [_pod(_gce("foo"))], None, None, id="gce-different-state"),
    pytest.param(_pod(Volume(name="volume with no restriction")), [], SKIP, None, id="gce-volume-without-restriction"),
    pytest.param(_pod(_gce("foo", read_only=True)), [_pod(_gce("foo", read_only=True))], None, None,
                 id="gce-both-read-only"),
    pytest.param(_pod(_gce("foo", read_only=True)), [_pod(_gce("foo"))], None, DISK, id="gce-one-read-only"),
    # TestAWSDiskConflicts
    pytest.param(_pod(), [_pod(_ebs("foo"))], SKIP, None, id="aws-one-state"),
    pytest.param(_pod(_ebs("foo")), [_pod(_ebs("foo"))], None, DISK, id="aws-same-state"),
    pytest.param(_pod(_ebs("bar")), [_pod(_ebs("foo"))], None, None, id="aws-different-state"),
    # TestRBDDiskConflicts
    pytest.param(_pod(), [_pod(_rbd("a", "b"))], SKIP, None, id="rbd-one-state"),
    pytest.param(_pod(_rbd("a", "b")), [_pod(_rbd("a", "b"))], None, DISK, id="rbd-same-state"),
    pytest.param(_pod(_rbd("c", "d")), [_pod(_rbd("a", "b"))], None, None, id="rbd-different-state"),
    pytest.param(_pod(_rbd("b", "c")), [_pod(_rbd("a", "b"))], None, DISK, id="rbd-one-shared-monitor"),
    pytest.param(_pod(_rbd("a", image="other")), [_pod(_rbd("a"))], None, None, id="rbd-other-image"),
    pytest.param(_pod(_rbd("a", read_only=True)), [_pod(_rbd("a", read_only=True))], None, None,
                 id="rbd-both-read-only"),
    # TestISCSIDiskConflicts
    pytest.param(_pod(), [_pod(_iscsi("iqn.2016-12.server:storage.target01"))], SKIP, None, id="iscsi-one-state"),
    pytest.param(_pod(_iscsi("iqn.2016-12.server:storage.target01")),
                 [_pod(_iscsi("iqn.2016-12.server:storage.target01"))], None, DISK, id="iscsi-same-state"),
    pytest.param(_pod(_iscsi("iqn.2017-12.server:storage.target01")),
                 [_pod(_iscsi("iqn.2016-12.server:storage.target01"))], None, None, id="iscsi-different-state"),
    pytest.param(_pod(_iscsi("q", read_only=True)), [_pod(_iscsi("q", read_only=True))], None, None,
                 id="iscsi-both-read-only"),
])
def test_disk_conflicts(pod: Pod, existing: list[Pod], want_pre: str | None, want: Status | None) -> None:
    assert _run(VolumeRestrictions(), pod, existing) == (want_pre, want)


_STORAGE = StaticStorage(claims=[
    make_pvc("claim-with-rwop-1").access_modes(READ_WRITE_ONCE_POD).obj(),
    make_pvc("claim-with-rwop-2").access_modes(READ_WRITE_ONCE_POD).obj(),
    make_pvc("claim-with-rwx").access_modes(READ_WRITE_MANY).obj(),
])


def _claims(name: str, *claims: str) -> Pod:
    b = make_pod(name)
    for i, c in enumerate(claims):
        b.volume(f"v{i}", claim=c)
    return b.obj()


# TestAccessModeConflicts
@pytest.mark.parametrize(("pod", "existing", "want_pre", "want"), [
    pytest.param(_pod(), [], SKIP, None, id="nothing"),
    pytest.param(_claims("pod-with-one-pvc", "claim-with-rwop-3"), [],
                 Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-with-rwop-3" not found'),
                 None, id="failed-to-get-pvc"),
    pytest.param(_claims("pod-with-one-pvc", "claim-with-rwop-1"), [_claims("pod-with-rwx", "claim-with-rwx")],
                 SKIP, None, id="no-access-mode-conflict"),
    pytest.param(_claims("pod-with-one-conflict", "claim-with-rwop-1"),
                 [_claims("pod-with-one-pvc", "claim-with-rwop-1"), _claims("pod-with-rwx", "claim-with-rwx")],
                 None, RWOP, id="access-mode-conflict-unschedulable"),
    pytest.param(_claims("pod-with-two-conflicts", "claim-with-rwop-1", "claim-with-rwop-2"),
                 [_claims("pod-with-two-pvcs", "claim-with-rwop-1", "claim-with-rwop-2"),
                  _claims("pod-with-rwx", "claim-with-rwx")],
                 None, RWOP, id="two-conflicts-unschedulable"),
])
def test_access_mode_conflicts(pod: Pod, existing: list[Pod], want_pre: Status | str | None,
                               want: Status | None) -> None:
    assert _run(VolumeRestrictions(_STORAGE), pod, existing) == (want_pre, want)


def test_a_rwop_claim_used_on_another_node_rejects_every_node() -> None:
    # The claim is counted across the cluster (the snapshot's usedPVCRefCounts), not per node.
    pod = _claims("new", "claim-with-rwop-1")
    assert _run(VolumeRestrictions(_STORAGE), pod, [], all_pods=[_claims("user", "claim-with-rwop-1")]) == (
        None, RWOP)


def test_preemption_removing_the_claims_user_clears_the_conflict() -> None:
    plugin = VolumeRestrictions(_STORAGE)
    user = _on(_claims("user", "claim-with-rwop-1"), "node-1")
    node = make_node("node-1").obj()
    state = CycleState()
    pod = PodInfo(_claims("new", "claim-with-rwop-1"))
    plugin.pre_filter(state, pod, snapshot_with([node], [user]))
    info = NodeInfo(node, [user])
    assert plugin.filter(state, pod, info) == RWOP
    clone = state.clone()
    assert plugin.remove_pod(clone, pod, PodInfo(user), info) is None
    assert plugin.filter(clone, pod, info) is None
    assert plugin.filter(state, pod, info) == RWOP  # the clone's count is its own
    assert plugin.add_pod(clone, pod, PodInfo(user), info) is None
    assert plugin.filter(clone, pod, info) == RWOP
    found = clone.get(PRE_FILTER_KEY)
    assert isinstance(found, PreFilterState)
    assert found.conflicting_claim_refs == 1


def test_events_to_register() -> None:
    assert [(e.event, e.hint) for e in VolumeRestrictions().events_to_register()] == [
        (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), after_assigned_pod_deleted),
        (ClusterEvent(EventResource.NODE, ActionType.ADD), None),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), after_claim_added)]
