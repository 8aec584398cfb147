"""NodeVolumeLimits: kube-scheduler's csi_test.go TestCSILimits cases (with its fake listers rebuilt:
four PVs and claims per driver, the pending, class-less and PV-less claims, VolumeAttachments), the
VolumeLimitScaling driver check, and csi-translation-lib's volume handles."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework import Code, CycleState, PodInfo
from kubesched.framework.events import ActionType, ClusterEvent, EventResource
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo
from kubesched.model.objects import ObjectMeta, Pod, Volume
from kubesched.model.storage import (
    ANN_MIGRATED_PLUGINS,
    CSIDriver,
    CSIDriverSpec,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    PersistentVolumeSpec,
)
from kubesched.model.volume_sources import (
    AWSElasticBlockStoreVolumeSource,
    AzureDiskVolumeSource,
    CinderVolumeSource,
    GCEPersistentDiskVolumeSource,
    PortworxVolumeSource,
    VsphereVirtualDiskVolumeSource,
)
from kubesched.plugins.helper import csi_translation as tr
from kubesched.plugins.helper.storage_lister import StaticStorage
from kubesched.plugins.node_volume_limits import REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits
from kubesched.plugins.node_volume_limits import hints as limits_hints
from tests.builders import (
    make_csi_node,
    make_node,
    make_pod,
    make_pv,
    make_pvc,
    make_storage_class,
    make_volume_attachment,
)
from tests.unit.scheduling_helpers import snapshot_with

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = tr.AWS_EBS
HOSTPATH = "kubernetes.io/hostpath"
SC_NAME = "csi-sc"
NODE = "node-for-max-pd-test-1"
EXCEEDED = Status(Code.UNSCHEDULABLE, REASON_MAX_VOLUME_COUNT_EXCEEDED)
SKIP = "skip"


def _pvs(drivers: tuple[str, ...]) -> list[PersistentVolume]:
    """getFakeCSIPVLister("csi", drivers...)."""
    out = []
    for driver in drivers:
        for j in range(4):
            handle = f"csi-{driver}-{j}"
            pv = make_pv(handle)
            if driver == EBS_IN_TREE:
                pv.spec(PersistentVolumeSpec(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=handle)))
            elif driver != HOSTPATH:
                pv.csi(driver, handle)
            out.append(pv.obj())
    return out


def _claims(drivers: tuple[str, ...]) -> list[PersistentVolumeClaim]:
    """getFakeCSIPVCLister("csi", scName, drivers...)."""
    out = [make_pvc(f"csi-{d}-{j}").volume_name(f"csi-{d}-{j}").obj() for d in drivers for j in range(4)]
    out.append(make_pvc("csi-4").storage_class(SC_NAME).obj())
    out.append(make_pvc("csi-5").obj())
    out.append(make_pvc("csi-6").storage_class(SC_NAME).volume_name("missing-in-action").obj())
    return out


def _csi_node(source: str, limit: int, drivers: tuple[str, ...]) -> CSINode | None:
    """getNodeWithPodAndVolumeLimits' CSINode, with enableMigrationOnNode(aws-ebs)."""
    if source == "csinode":
        node = make_csi_node(NODE, *((d, limit) for d in drivers))
    elif source == "csinode-with-no-limit":
        node = make_csi_node(NODE, *((d, None) for d in drivers))
    elif source == "no-csi-driver":
        node = make_csi_node(NODE)
    else:
        return None
    node.metadata.annotations = {ANN_MIGRATED_PLUGINS: EBS_IN_TREE}
    return node


def _claim_pod(name: str, *claims: str, namespace: str = "default") -> Pod:
    b = make_pod(name, namespace)
    for i, c in enumerate(claims):
        b.volume(f"v{i}", claim=c)
    return b.obj()


def _ephemeral_pod(name: str, uid: str, *volumes: str) -> Pod:
    b = make_pod(name, "test").uid(uid)
    for v in volumes:
        b.volume(v, ephemeral=True)
    return b.obj()


def _ephemeral_claim(pod: Pod, volume: str, owned: bool = True) -> PersistentVolumeClaim:
    b = make_pvc(f"{pod.metadata.name}-{volume}", "test").storage_class(SC_NAME)
    if owned:
        b.owner("Pod", pod.metadata.name, pod.metadata.uid)
    return b.obj()


def _inline(*volumes: Volume, name: str = "inline") -> Pod:
    b = make_pod(name)
    for v in volumes:
        b.add_volume(v)
    return b.obj()


def _ebs_inline(volume_id: str) -> Volume:
    return Volume(name="ebs", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id=volume_id))


running = _claim_pod("running", f"csi-{EBS}-3")
pending_volume = _claim_pod("pending", "csi-4")
unbound_pvc_2 = _claim_pod("unbound-2", "csi-4")
missing_pv = _claim_pod("missing-pv", "csi-6")
no_sc_pvc = _claim_pod("no-sc", "csi-5")
gce_two_vol = _claim_pod("gce-two", f"csi-{GCE}-1", f"csi-{GCE}-2")
in_tree_one_vol = _claim_pod("in-tree-one", f"csi-{EBS_IN_TREE}-0")
in_tree_two_vol = _claim_pod("in-tree-two", f"csi-{EBS_IN_TREE}-1", f"csi-{EBS_IN_TREE}-2")
csi_ebs_one_vol = _claim_pod("ebs-one", f"csi-{EBS}-0")
csi_ebs_two_vol = _claim_pod("ebs-two", f"csi-{EBS}-1", f"csi-{EBS}-2")
in_tree_non_migratable = _claim_pod("hostpath", f"csi-{HOSTPATH}-0")
ephemeral_volume = _ephemeral_pod("abc", "12345", "xyz")
ephemeral_claim = _ephemeral_claim(ephemeral_volume, "xyz")
conflicting_claim = _ephemeral_claim(ephemeral_volume, "xyz", owned=False)
ephemeral_two_volume = _ephemeral_pod("abc", "12345II", "x", "y")
ephemeral_claim_x = _ephemeral_claim(ephemeral_two_volume, "x")
ephemeral_claim_y = _ephemeral_claim(ephemeral_two_volume, "y")
in_tree_inline = _inline(_ebs_inline("aws-inline1"))
in_tree_inline_same_csi_id = _inline(_ebs_inline(f"csi-{EBS}-1"))
only_configmap_and_secret = _inline(Volume(name="cm"), Volume(name="secret"))
pvc_with_configmap_and_secret = _claim_pod("pvc-cm", f"csi-{EBS}-0")
ephemeral_with_configmap_and_secret = make_pod("abc", "test").volume("cm").volume("xyz", ephemeral=True).obj()
inline_migratable_with_configmap = _inline(Volume(name="cm"), _ebs_inline("aws-inline1"))


@dataclass
class Case:
    new_pod: Pod
    drivers: tuple[str, ...]
    existing: tuple[Pod, ...] = ()
    max_vols: int = 0
    limit_source: str = ""
    va_count: int = 0
    extra_claims: tuple[PersistentVolumeClaim, ...] = ()
    want: Status | None = None
    want_pre: str | None = None
    drivers_opt_in: tuple[str, ...] = field(default=())


CASES = [
    pytest.param(Case(csi_ebs_one_vol, (EBS,), max_vols=2, va_count=2, limit_source="csinode", want=EXCEEDED),
                 id="should count VolumeAttachments towards volume limit when no pods exist"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), max_vols=2, va_count=1, limit_source="csinode"),
                 id="should schedule pod when VolumeAttachments count does not exceed limit"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, csi_ebs_two_vol), 4, "csinode"),
                 id="fits when node volume limit >= new pods CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, csi_ebs_two_vol), 2, "csinode", want=EXCEEDED),
                 id="doesn't when node volume limit <= pods CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, csi_ebs_two_vol), 2, "csinode-with-no-limit"),
                 id="should when driver does not support volume limits"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (pending_volume, csi_ebs_two_vol), 2, "csinode", want=EXCEEDED),
                 id="count pending PVCs towards volume limit <= pods CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (pending_volume, unbound_pvc_2, csi_ebs_two_vol), 4, "csinode"),
                 id="count multiple pending pvcs towards volume limit >= pods CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (missing_pv, csi_ebs_two_vol), 2, "csinode", want=EXCEEDED),
                 id="should count PVCs with invalid PV name but valid SC"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, no_sc_pvc), 2, "csinode"),
                 id="don't count pvcs with missing SC towards volume limit"),
    pytest.param(Case(csi_ebs_one_vol, (EBS, GCE), (gce_two_vol, csi_ebs_two_vol), 2, "csinode", want=EXCEEDED),
                 id="count pvcs with the same type towards volume limit"),
    pytest.param(Case(gce_two_vol, (EBS, GCE), (csi_ebs_two_vol, running), 2, "csinode"),
                 id="don't count pvcs with different type towards volume limit"),
    pytest.param(Case(in_tree_one_vol, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode", want=EXCEEDED),
                 id="should count in-tree volumes if migration is enabled"),
    pytest.param(Case(in_tree_inline, (EBS_IN_TREE, EBS), (in_tree_two_vol,)), id="nil csi node"),
    pytest.param(Case(pending_volume, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode", want=EXCEEDED),
                 id="should count unbound in-tree volumes if migration is enabled"),
    pytest.param(Case(in_tree_one_vol, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode-with-no-limit"),
                 id="should not limit pod if volume used does not report limits"),
    pytest.param(Case(in_tree_non_migratable, (HOSTPATH, EBS), (csi_ebs_two_vol,), 2, "csinode"),
                 id="should not count non-migratable in-tree volumes"),
    pytest.param(Case(in_tree_inline, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode", want=EXCEEDED),
                 id="should count in-tree inline volumes if migration is enabled"),
    pytest.param(Case(in_tree_one_vol, (EBS_IN_TREE, EBS), (csi_ebs_two_vol,), 2, "csinode", want=EXCEEDED),
                 id="should count in-tree and csi volumes if migration is enabled (scheduling in-tree volumes)"),
    pytest.param(Case(in_tree_inline, (EBS_IN_TREE, EBS), (csi_ebs_two_vol, in_tree_one_vol), 3, "csinode",
                      want=EXCEEDED),
                 id="should count in-tree, inline and csi volumes if migration is enabled"),
    pytest.param(Case(in_tree_inline_same_csi_id, (EBS_IN_TREE, EBS), (csi_ebs_two_vol, in_tree_one_vol), 3,
                      "csinode"),
                 id="should not count in-tree, inline and csi volumes with the same volume handle"),
    pytest.param(Case(csi_ebs_one_vol, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode", want=EXCEEDED),
                 id="should count in-tree and csi volumes if migration is enabled (scheduling csi volumes)"),
    pytest.param(Case(ephemeral_volume, (EBS,), limit_source="csinode-with-no-limit",
                      want=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
                 id="ephemeral volume missing"),
    pytest.param(Case(ephemeral_volume, (EBS,), limit_source="csinode-with-no-limit",
                      extra_claims=(conflicting_claim,),
                      want=Status(Code.ERROR, "PVC test/abc-xyz was not created for pod test/abc (pod is not owner)")),
                 id="ephemeral volume not owned"),
    pytest.param(Case(ephemeral_volume, (EBS,), limit_source="csinode-with-no-limit", extra_claims=(ephemeral_claim,)),
                 id="ephemeral volume unbound"),
    pytest.param(Case(ephemeral_volume, (EBS,), (running, csi_ebs_two_vol), 2, "csinode",
                      extra_claims=(ephemeral_claim,), want=EXCEEDED),
                 id="ephemeral doesn't when node volume limit <= pods CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, ephemeral_two_volume), 2, "csinode",
                      extra_claims=(ephemeral_claim_x, ephemeral_claim_y), want=EXCEEDED),
                 id="ephemeral doesn't when node volume limit <= pods ephemeral CSI volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, ephemeral_volume, csi_ebs_two_vol), 3, "csinode",
                      extra_claims=(ephemeral_claim,), want=EXCEEDED),
                 id="persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent volume"),
    pytest.param(Case(csi_ebs_one_vol, (EBS,), (running, ephemeral_volume, csi_ebs_two_vol), 5, "csinode",
                      extra_claims=(ephemeral_claim,)),
                 id="persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume"),
    pytest.param(Case(only_configmap_and_secret, (EBS,), max_vols=2, limit_source="csinode", want_pre=SKIP),
                 id="skip Filter when the pod only uses secrets and configmaps"),
    pytest.param(Case(pvc_with_configmap_and_secret, (EBS,), max_vols=2, limit_source="csinode"),
                 id="don't skip Filter when the pod has pvcs"),
    pytest.param(Case(ephemeral_with_configmap_and_secret, (EBS,), limit_source="csinode-with-no-limit",
                      want=Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                                  'looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found')),
                 id="don't skip Filter when the pod has ephemeral volumes"),
    pytest.param(Case(inline_migratable_with_configmap, (EBS_IN_TREE, EBS), (in_tree_two_vol,), 2, "csinode",
                      want=EXCEEDED),
                 id="don't skip Filter when the pod has inline migratable volumes"),
]


def _run(case: Case) -> tuple[str | None, Status | None]:
    csi_node = _csi_node(case.limit_source, case.max_vols, case.drivers)
    attachments = [make_volume_attachment(f"va-{d}-{j}", d, NODE, f"csi-{d}-{j}")
                   for d in case.drivers for j in range(case.va_count)]
    drivers = [CSIDriver(metadata=ObjectMeta(name=d), spec=CSIDriverSpec(prevent_pod_scheduling_if_missing=True))
               for d in case.drivers_opt_in]
    storage = StaticStorage(volumes=_pvs(case.drivers), claims=[*_claims(case.drivers), *case.extra_claims],
                            classes=[make_storage_class(SC_NAME, provisioner=case.drivers[0])],
                            csi_nodes=[] if csi_node is None else [csi_node], csi_drivers=drivers,
                            attachments=attachments)
    plugin = CSILimits(storage, volume_id_prefix="random")
    node = make_node(NODE).obj()
    existing = [_bound(p) for p in case.existing]
    state = CycleState()
    pod = PodInfo(case.new_pod)
    _, pre = plugin.pre_filter(state, pod, snapshot_with([node], [*existing]))
    if pre is not None and pre.is_skip():
        return SKIP, None
    assert pre is None
    return None, plugin.filter(state, pod, NodeInfo(node, existing))


def _bound(pod: Pod) -> Pod:
    pod.spec.node_name = NODE
    return pod


@pytest.mark.parametrize("case", CASES)
def test_csi_limits(case: Case) -> None:
    assert _run(case) == (case.want_pre, case.want)


# TestVolumeLimitScalingGate (VolumeLimitScaling is beta and on in v1.37)
@pytest.mark.parametrize(("limit_source", "limit", "opt_in", "want"), [
    pytest.param("no-csi-driver", 0, False, None, id="allow-when-csidriver-does-not-ask"),
    pytest.param("no-csi-driver", 0, True, Status(Code.UNSCHEDULABLE, f"{EBS} CSI driver is not installed on the node"),
                 id="fail-when-driver-not-installed-and-csidriver-asks"),
    pytest.param("", 0, True, Status(Code.UNSCHEDULABLE, f"{EBS} CSI driver is not installed on the node"),
                 id="fail-when-no-csinode-and-csidriver-asks"),
    pytest.param("csinode", 2, True, None, id="driver-installed-within-limit"),
])
def test_volume_limit_scaling(limit_source: str, limit: int, opt_in: bool, want: Status | None) -> None:
    case = Case(csi_ebs_one_vol, (EBS,), max_vols=limit, limit_source=limit_source,
                drivers_opt_in=(EBS,) if opt_in else ())
    assert _run(case) == (None, want)


def test_a_new_pods_volumes_are_resolved_once_per_csinode_presence() -> None:
    storage = StaticStorage(volumes=_pvs((EBS,)), claims=_claims((EBS,)),
                            csi_nodes=[make_csi_node("a", (EBS, 1)), make_csi_node("b", (EBS, 1))])
    plugin = CSILimits(storage)
    state = CycleState()
    pod = PodInfo(csi_ebs_two_vol)
    nodes = [make_node(n).obj() for n in ("a", "b", "c")]
    plugin.pre_filter(state, pod, snapshot_with([*nodes]))
    assert [plugin.filter(state, pod, NodeInfo(n)) for n in nodes] == [EXCEEDED, EXCEEDED, None]


# --- csi-translation-lib ---------------------------------------------------------------------------

@pytest.mark.parametrize(("volume", "driver", "handle"), [
    pytest.param(Volume(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="vol-1")), EBS, "vol-1",
                 id="ebs-bare"),
    pytest.param(Volume(aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="aws://us-east-1a/vol-2")),
                 EBS, "vol-2", id="ebs-url"),
    pytest.param(Volume(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="pd")), GCE,
                 "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd", id="gce-inline"),
    pytest.param(Volume(azure_disk=AzureDiskVolumeSource(disk_name="d", disk_uri="uri")), "disk.csi.azure.com", "uri",
                 id="azure-disk"),
    pytest.param(Volume(cinder=CinderVolumeSource(volume_id="c")), "cinder.csi.openstack.org", "c", id="cinder"),
    pytest.param(Volume(portworx_volume=PortworxVolumeSource(volume_id="px")), "pxd.portworx.com", "px",
                 id="portworx"),
])
def test_inline_translation(volume: Volume, driver: str, handle: str) -> None:
    plugin = tr.in_tree_plugin(volume)
    assert plugin is not None
    assert (plugin.csi_driver, tr.inline_volume_handle(plugin, volume)) == (driver, handle)


@pytest.mark.parametrize(("labels", "handle"), [
    pytest.param({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd", id="no-zone"),
    pytest.param({"topology.kubernetes.io/zone": "us-central1-a"}, "projects/UNSPECIFIED/zones/us-central1-a/disks/pd",
                 id="zonal"),
    pytest.param({"failure-domain.beta.kubernetes.io/zone": "us-central1-a__us-central1-b"},
                 "projects/UNSPECIFIED/regions/us-central1/disks/pd", id="regional"),
])
def test_gce_pv_handle_follows_its_zone_labels(labels: dict[str, str], handle: str) -> None:
    pv = make_pv("p").spec(PersistentVolumeSpec(gce_persistent_disk=GCEPersistentDiskVolumeSource(pd_name="pd"))).obj()
    pv.metadata.labels = labels
    assert tr.pv_volume_handle(tr.in_tree_plugin(pv.spec), pv) == handle  # type: ignore[arg-type]


@pytest.mark.parametrize(("volume", "message"), [
    pytest.param(Volume(name="e", aws_elastic_block_store=AWSElasticBlockStoreVolumeSource(volume_id="aws://z/bad")),
                 "converting volume(e) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID "
                 "Invalid format for AWS volume (aws://z/bad)", id="ebs-bad-id"),
    pytest.param(Volume(name="a", azure_disk=AzureDiskVolumeSource(disk_uri="u", kind="Shared")),
                 "converting volume(a) from inline to csi: kind(Shared) is not supported in csi migration",
                 id="azure-unmanaged"),
])
def test_an_untranslatable_inline_volume_is_an_error(volume: Volume, message: str) -> None:
    storage = StaticStorage(csi_nodes=[make_csi_node(NODE, (EBS, 5))])
    plugin = CSILimits(storage)
    state = CycleState()
    pod = PodInfo(_inline(volume))
    node = make_node(NODE).obj()
    plugin.pre_filter(state, pod, snapshot_with([node]))
    assert plugin.filter(state, pod, NodeInfo(node)) == Status(Code.ERROR, message)


def test_vsphere_is_migratable_but_not_counted() -> None:
    volume = Volume(vsphere_volume=VsphereVirtualDiskVolumeSource(volume_path="[ds] p"))
    plugin = CSILimits(StaticStorage(csi_nodes=[make_csi_node(NODE, ("csi.vsphere.vmware.com", 0))]))
    state = CycleState()
    pod = PodInfo(_inline(volume))
    node = make_node(NODE).obj()
    assert plugin.pre_filter(state, pod, snapshot_with([node])) == (None, None)
    assert plugin.filter(state, pod, NodeInfo(node)) is None


def test_events_to_register() -> None:
    assert [(e.event, e.hint) for e in CSILimits().events_to_register()] == [
        (ClusterEvent(EventResource.CSI_NODE, ActionType.ADD), None),
        (ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), limits_hints.after_csi_node_updated),
        (ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), limits_hints.after_assigned_pod_deleted),
        (ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD), limits_hints.after_claim_added),
        (ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
         limits_hints.after_volume_attachment_deleted)]
