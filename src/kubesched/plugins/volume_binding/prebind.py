"""PreBind's side of the volume binder (binder.go BindPodVolumes): write each chosen PV's claimRef
and each claim to provision's selected-node annotation through the handle, then wait, bounded by
bindTimeoutSeconds, until the PV controller (and provisioners) report every claim bound.

The waiting reads the informers' versions, never the assume cache: the cache may be assumed again
by the scheduling cycle meanwhile, and the apiserver's state is what the PV controller shares.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from kubesched.framework.handle import Lister
from kubesched.framework.status import Status
from kubesched.model.objects import Node, Pod
from kubesched.model.storage import ANN_SELECTED_NODE, PersistentVolume, PersistentVolumeClaim
from kubesched.plugins.helper.csi_translation import TranslationError
from kubesched.plugins.volume_binding.binder import BinderError, PodVolumes, VolumeBinder, is_fully_bound
from kubesched.plugins.volume_binding.matching import check_node_affinity
from kubesched.plugins.volume_binding.migration import try_translate_pv_to_csi

PVWriter = Callable[[PersistentVolume], Awaitable[PersistentVolume | Status]]
PVCWriter = Callable[[PersistentVolumeClaim], Awaitable[PersistentVolumeClaim | Status]]
Sleep = Callable[[float], Awaitable[None]]

# kube-scheduler polls every second and only after the first second; the informer usually has the
# PV controller's answer well before, so a shorter period saves most of that second per pod.
POLL_SECONDS = 0.2


def _older(ours: str, theirs: str) -> bool:
    """CompareResourceVersion(ours, theirs) > 0: the informer has not seen our write yet."""
    try:
        return int(ours) > int(theirs)
    except ValueError:
        return False


class VolumeBindingWaiter:
    def __init__(self, binder: VolumeBinder, pods: Lister[Pod], nodes: Lister[Node], write_pv: PVWriter,
                 write_pvc: PVCWriter, sleep: Sleep, clock: Callable[[], float]) -> None:
        self.binder = binder
        self.pods = pods
        self.nodes = nodes
        self.write_pv = write_pv
        self.write_pvc = write_pvc
        self.sleep = sleep
        self.clock = clock

    async def bind_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes,
                               bind_timeout: float) -> None:
        """Raises BinderError with kube-scheduler's message when the binding fails or times out."""
        await self._api_update(pod, volumes)
        deadline = self.clock() + bind_timeout
        while True:
            if self.check_bindings(pod, node_name, volumes):
                return
            if self.clock() >= deadline:
                raise BinderError("binding volumes: context deadline exceeded")
            await self.sleep(POLL_SECONDS)

    async def _api_update(self, pod: Pod, volumes: PodVolumes) -> None:
        """bindAPIUpdate: PVs first, then claims; what was not written is rolled back in the cache."""
        bindings, provisions = volumes.static_bindings, volumes.dynamic_provisions
        done_pvs = done_pvcs = 0
        try:
            for binding in bindings:
                written = await self.write_pv(binding.pv)
                if isinstance(written, Status):
                    raise BinderError(written.message())
                binding.pv = written
                done_pvs += 1
            for provision in provisions:
                claim = await self.write_pvc(provision.pvc)
                if isinstance(claim, Status):
                    raise BinderError(claim.message())
                provision.pvc = claim
                done_pvcs += 1
        finally:
            self.binder.pv_cache.restore_all([b.pv for b in bindings[done_pvs:]])
            self.binder.pvc_cache.restore_all([p.pvc for p in provisions[done_pvcs:]])

    def check_bindings(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """checkBindings: True when every claim is fully bound; False to wait; BinderError when the
        binding must be retried by scheduling the pod again."""
        try:
            return self._check(pod, node_name, volumes)
        except BinderError as e:
            raise BinderError(f"binding volumes: {e}") from e

    def _check(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        node = self.nodes.get(node_name)
        if node is None:
            raise BinderError(f'failed to get node "{node_name}": node "{node_name}" not found')
        meta = pod.metadata
        if self.pods.get(f"{meta.namespace}/{meta.name}") is None:
            raise BinderError(f'pod does not exist any more: pods "{meta.name}" not found')
        labels = node.metadata.labels
        csi_node = self.binder.storage.csi_node(node_name)
        pv_cache, pvc_cache = self.binder.pv_cache, self.binder.pvc_cache
        for binding in volumes.static_bindings:
            name = binding.pv.metadata.name
            pv = pv_cache.get_api_obj(name)
            if pv is None:
                raise BinderError(f'failed to check binding: persistentvolumes "{name}" not found')
            key = f"{binding.pvc.metadata.namespace}/{binding.pvc.metadata.name}"
            pvc = pvc_cache.get_api_obj(key)
            if pvc is None:
                raise BinderError(f'failed to check binding: persistentvolumeclaims "{key}" not found')
            if _older(binding.pv.metadata.resource_version, pv.metadata.resource_version):
                return False
            try:
                pv = try_translate_pv_to_csi(pv, csi_node)
            except TranslationError as e:
                raise BinderError(f"failed to translate pv to csi: {e}") from e
            if not check_node_affinity(pv, labels):
                raise BinderError(f'pv "{name}" node affinity doesn\'t match node "{node_name}": '
                                  "no matching NodeSelectorTerms")
            if pv.spec.claim_ref is None or not pv.spec.claim_ref.uid:
                raise BinderError(f'ClaimRef got reset for pv "{name}"')
            if not is_fully_bound(pvc):
                return False
        for provision in volumes.dynamic_provisions:
            claim = provision.pvc
            key = f"{claim.metadata.namespace}/{claim.metadata.name}"
            pvc = pvc_cache.get_api_obj(key)
            if pvc is None:
                raise BinderError(f'failed to check provisioning pvc: persistentvolumeclaims "{key}" not found')
            if _older(claim.metadata.resource_version, pvc.metadata.resource_version):
                return False
            annotations = pvc.metadata.annotations
            if not annotations:
                raise BinderError(f'selectedNode annotation reset for PVC "{claim.metadata.name}"')
            if annotations.get(ANN_SELECTED_NODE, "") != node_name:
                # A provisioner that fails removes the annotation to ask for another node.
                raise BinderError(f'provisioning failed for PVC "{claim.metadata.name}"')
            if pvc.spec.volume_name:
                pv = pv_cache.get_api_obj(pvc.spec.volume_name)
                if pv is None:
                    return False  # not in the informer yet, or deleted (then the claim unbinds)
                try:
                    pv = try_translate_pv_to_csi(pv, csi_node)
                except TranslationError as e:
                    raise BinderError(str(e)) from e
                if not check_node_affinity(pv, labels):
                    raise BinderError(f'pv "{pv.metadata.name}" node affinity doesn\'t match node "{node_name}": '
                                      "no matching NodeSelectorTerms")
            if not is_fully_bound(pvc):
                return False
        return True
