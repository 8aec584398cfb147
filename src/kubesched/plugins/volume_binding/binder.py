"""The scheduler's volume binder (kube-scheduler volumebinding/binder.go), its decisions: a pod's
claims sorted into bound, unbound with delayed binding and unbound immediate ones; for one node,
whether the bound claims' PVs fit it and which PV (or provisioning) each unbound claim would get;
and the assumption of that choice in the volume cache. PreBind's API side is in prebind.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import msgspec

from kubesched.model.objects import Node, Pod, Volume
from kubesched.model.quantity import value
from kubesched.model.storage import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    CLAIM_LOST,
    VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.plugins.helper.csi_translation import TranslationError
from kubesched.plugins.helper.storage_lister import StorageLister
from kubesched.plugins.volume_binding.assume_cache import AssumeCache
from kubesched.plugins.volume_binding.matching import (
    STORAGE,
    MatchError,
    bind_volume_to_claim,
    check_node_affinity,
    claim_class,
    find_matching_volume,
    requested_storage,
    volume_class,
)
from kubesched.plugins.volume_binding.migration import try_translate_pv_to_csi
from kubesched.plugins.volume_binding.provisioning import has_enough_capacity, match_topology

# kube-scheduler's ConflictReasons, word for word.
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


class BinderError(Exception):
    """Something that stops the cycle (kube-scheduler's AsStatus(err)): an Error, not a rejection."""


class ClaimProblem(Exception):
    """A claim the pod cannot use now (missing, lost, being deleted, not the pod's): PreFilter's
    UnschedulableAndUnresolvable, with the error's text as its reason."""


@dataclass(slots=True)
class BindingInfo:
    """A claim and the PV proposed for it (after Reserve: the PV as assumed, bound to the claim)."""

    pvc: PersistentVolumeClaim
    pv: PersistentVolume

    def storage_class_name(self) -> str:
        return self.pv.spec.storage_class_name

    def requested_and_capacity(self) -> tuple[int, int]:
        req = self.pvc.spec.resources.requests.get(STORAGE)
        cap = self.pv.spec.capacity.get(STORAGE)
        return (value(req) if req else 0), (value(cap) if cap else 0)


@dataclass(slots=True)
class DynamicProvision:
    pvc: PersistentVolumeClaim
    node_capacity: CSIStorageCapacity | None = None


@dataclass(slots=True)
class PodVolumes:
    static_bindings: list[BindingInfo] = field(default_factory=list)
    dynamic_provisions: list[DynamicProvision] = field(default_factory=list)


@dataclass(slots=True)
class PodVolumeClaims:
    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    unbound_immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # Storage class -> its PVs (assumed versions included), for the delayed claims' matching.
    unbound_volumes_delay_binding: dict[str, list[PersistentVolume]] = field(default_factory=dict)


def claim_name_of(pod: Pod, volume: Volume) -> tuple[str, bool] | None:
    """(claim name, ephemeral?) of a volume backed by a claim, None for other volumes. A generic
    ephemeral volume's claim is named <pod>-<volume> (ephemeral.VolumeClaimName)."""
    if volume.persistent_volume_claim is not None:
        return volume.persistent_volume_claim.claim_name, False
    if volume.ephemeral is not None:
        return f"{pod.metadata.name}-{volume.name}", True
    return None


def has_claims(pod: Pod) -> bool:
    return any(v.persistent_volume_claim is not None or v.ephemeral is not None for v in pod.spec.volumes)


def check_is_for_pod(pod: Pod, pvc: PersistentVolumeClaim) -> None:
    """ephemeral.VolumeIsForPod: the claim must be controlled by the pod."""
    pm, cm = pod.metadata, pvc.metadata
    owned = any(ref.controller and ref.uid == pm.uid for ref in cm.owner_references)
    if cm.namespace != pm.namespace or not owned:
        raise ClaimProblem(f"PVC {cm.namespace}/{cm.name} was not created for pod {pm.namespace}/{pm.name} "
                           "(pod is not owner)")


def is_fully_bound(pvc: PersistentVolumeClaim) -> bool:
    return bool(pvc.spec.volume_name) and ANN_BIND_COMPLETED in pvc.metadata.annotations


def _by_size(claims: list[PersistentVolumeClaim]) -> list[PersistentVolumeClaim]:
    # sort.Sort is not stable, but Go's insertion sort below 12 elements is; so is Python's sort.
    return sorted(claims, key=requested_storage)


class VolumeBinder:
    """The binder's state is its two assume caches; every other read goes to the listers."""

    def __init__(self, storage: StorageLister) -> None:
        self.storage = storage
        self.pv_cache: AssumeCache[PersistentVolume] = AssumeCache(
            storage.persistent_volume, storage.persistent_volumes, lambda pv: pv.metadata.name, "persistentvolumes")
        self.pvc_cache: AssumeCache[PersistentVolumeClaim] = AssumeCache(
            _claim_getter(storage), lambda: (), lambda c: f"{c.metadata.namespace}/{c.metadata.name}",
            "persistentvolumeclaims")

    # --- PreFilter -------------------------------------------------------------------------------

    def check_claims(self, pod: Pod) -> None:
        """VolumeBinding.podHasPVCs's errors, in volume order: raises ClaimProblem for the first claim
        that is missing, lost, being deleted, or (ephemeral) not the pod's. Reads the informer."""
        ns = pod.metadata.namespace
        for vol in pod.spec.volumes:
            named = claim_name_of(pod, vol)
            if named is None:
                continue
            name, ephemeral = named
            pvc = self.storage.claim(ns, name)
            if pvc is None:
                if ephemeral:
                    raise ClaimProblem("waiting for ephemeral volume controller to create the persistentvolumeclaim "
                                       f'"{name}"')
                raise ClaimProblem(f'persistentvolumeclaim "{name}" not found')
            if pvc.status.phase == CLAIM_LOST:
                raise ClaimProblem(f'persistentvolumeclaim "{name}" bound to non-existent persistentvolume '
                                   f'"{pvc.spec.volume_name}"')
            if pvc.metadata.deletion_timestamp is not None:
                raise ClaimProblem(f'persistentvolumeclaim "{name}" is being deleted')
            if ephemeral:
                check_is_for_pod(pod, pvc)

    def _claim(self, pod: Pod, vol: Volume) -> tuple[bool, PersistentVolumeClaim | None]:
        """isVolumeBound: (fully bound?, the claim from the assume cache); (True, None) for a volume
        without a claim."""
        named = claim_name_of(pod, vol)
        if named is None:
            return True, None
        name, ephemeral = named
        key = f"{pod.metadata.namespace}/{name}"
        pvc = self.pvc_cache.get(key)
        if pvc is None:
            raise BinderError(f'error getting PVC "{key}": persistentvolumeclaims "{key}" not found')
        if ephemeral:
            try:
                check_is_for_pod(pod, pvc)
            except ClaimProblem as e:
                raise BinderError(str(e)) from e
        return is_fully_bound(pvc), pvc

    def _delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        """IsDelayBindingMode: only a class that exists and says WaitForFirstConsumer delays."""
        name = claim_class(pvc)
        if not name:
            return False
        sc = self.storage.storage_class(name)
        return sc is not None and sc.volume_binding_mode == VOLUME_BINDING_WAIT_FOR_FIRST_CONSUMER

    def pod_volume_claims(self, pod: Pod) -> PodVolumeClaims:
        """GetPodVolumeClaims. Raises BinderError."""
        claims = PodVolumeClaims()
        for vol in pod.spec.volumes:
            bound, pvc = self._claim(pod, vol)
            if pvc is None:
                continue
            if bound:
                claims.bound.append(pvc)
            elif self._delay_binding(pvc) and not pvc.spec.volume_name:
                claims.unbound_delay_binding.append(pvc)
            else:
                # Immediate, or pre-bound to a PV: the PV controller should have bound it already.
                claims.unbound_immediate.append(pvc)
        for pvc in claims.unbound_delay_binding:
            name = claim_class(pvc)
            if name not in claims.unbound_volumes_delay_binding:
                claims.unbound_volumes_delay_binding[name] = self.pv_cache.list(
                    lambda pv, name=name: volume_class(pv) == name)  # type: ignore[misc]
        return claims

    def all_bound(self, pod: Pod) -> bool:
        """arePodVolumesBound, on the assume cache."""
        try:
            return all(self._claim(pod, vol)[0] for vol in pod.spec.volumes)
        except BinderError:
            return False

    # --- Filter ----------------------------------------------------------------------------------

    def find_pod_volumes(self, pod: Pod, claims: PodVolumeClaims, node: Node) -> tuple[PodVolumes, list[str]]:
        """FindPodVolumes: what the pod's claims would get on this node, and the reasons it cannot
        (none: it fits). Raises BinderError."""
        volumes = PodVolumes()
        bound_ok, pvs_found = True, True
        unbound_ok, enough_storage = True, True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(claims.bound, node)
        if claims.unbound_delay_binding:
            unbound_ok, enough_storage = self._unbound(claims, node, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_storage:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _check_bound_claims(self, claims: list[PersistentVolumeClaim], node: Node) -> tuple[bool, bool]:
        """(every bound PV fits the node, every bound PV exists); the first failure decides. An
        in-tree PV is read as its CSI translation where the node migrated its plugin."""
        csi_node = self.storage.csi_node(node.metadata.name)
        labels = node.metadata.labels
        for pvc in claims:
            pv = self.pv_cache.get(pvc.spec.volume_name)
            if pv is None:
                return True, False
            try:
                pv = try_translate_pv_to_csi(pv, csi_node)
            except TranslationError as e:
                raise BinderError(str(e)) from e
            if not check_node_affinity(pv, labels):
                return False, True
        return True, True

    def _unbound(self, claims: PodVolumeClaims, node: Node, volumes: PodVolumes) -> tuple[bool, bool]:
        """(unbound claims satisfied, enough storage); fills `volumes`."""
        to_match: list[PersistentVolumeClaim] = []
        to_provision: list[PersistentVolumeClaim] = []
        for pvc in claims.unbound_delay_binding:
            selected = pvc.metadata.annotations.get(ANN_SELECTED_NODE)
            if selected is None:
                to_match.append(pvc)
            elif selected != node.metadata.name:
                return False, True  # already being provisioned for another node
            else:
                to_provision.append(pvc)
        satisfied = True
        if to_match:
            satisfied, bindings, unmatched = self._find_matching(to_match, claims.unbound_volumes_delay_binding,
                                                                 node.metadata.labels)
            volumes.static_bindings = bindings
            to_provision.extend(unmatched)
        if to_provision:
            satisfied, enough, provisions = self._check_provisions(to_provision, node.metadata.labels)
            volumes.dynamic_provisions = provisions
            return satisfied, enough
        return satisfied, True

    def _find_matching(self, claims: list[PersistentVolumeClaim], by_class: Mapping[str, list[PersistentVolume]],
                       labels: Mapping[str, str]) -> tuple[bool, list[BindingInfo], list[PersistentVolumeClaim]]:
        """findMatchingVolumes: smallest claims first, each PV given once."""
        chosen: set[str] = set()
        bindings: list[BindingInfo] = []
        unmatched: list[PersistentVolumeClaim] = []
        for pvc in _by_size(claims):
            try:
                pv = find_matching_volume(pvc, by_class.get(claim_class(pvc), ()), labels, chosen)
            except MatchError as e:
                raise BinderError(str(e)) from e
            if pv is None:
                unmatched.append(pvc)
                continue
            chosen.add(pv.metadata.name)
            bindings.append(BindingInfo(pvc, pv))
        return not unmatched, bindings, unmatched

    def _check_provisions(self, claims: list[PersistentVolumeClaim],
                          labels: Mapping[str, str]) -> tuple[bool, bool, list[DynamicProvision]]:
        """checkVolumeProvisions: (provisioning possible here, enough storage, the provisions)."""
        provisions: list[DynamicProvision] = []
        for pvc in claims:
            key = f"{pvc.metadata.namespace}/{pvc.metadata.name}"
            class_name = claim_class(pvc)
            if not class_name:
                raise BinderError(f'no class for claim "{key}"')
            sc = self.storage.storage_class(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, []
            if not match_topology(sc.allowed_topologies, labels):
                return False, True, []
            enough, capacity = has_enough_capacity(self.storage, sc, pvc, labels)
            if not enough:
                return True, False, []
            provisions.append(DynamicProvision(pvc, capacity))
        return True, True, provisions

    # --- Reserve / Unreserve ---------------------------------------------------------------------

    def assume_pod_volumes(self, pod: Pod, node_name: str, volumes: PodVolumes) -> bool:
        """AssumePodVolumes: the chosen PVs bound to their claims and the claims to provision given
        the node, in the assume cache; `volumes` then holds the assumed versions. True when every
        claim is bound already (nothing to do). Raises BinderError, having reverted what it assumed."""
        if self.all_bound(pod):
            return True
        new_bindings: list[BindingInfo] = []
        for binding in volumes.static_bindings:
            pv, dirty = bind_volume_to_claim(binding.pv, binding.pvc)
            if dirty:
                try:
                    self.pv_cache.assume(pv)
                except Exception as e:
                    self.pv_cache.restore_all([b.pv for b in new_bindings])
                    raise BinderError(str(e)) from e
            new_bindings.append(BindingInfo(binding.pvc, pv))
        new_provisions: list[DynamicProvision] = []
        for provision in volumes.dynamic_provisions:
            meta = provision.pvc.metadata
            claim = msgspec.structs.replace(provision.pvc, metadata=msgspec.structs.replace(
                meta, annotations={**meta.annotations, ANN_SELECTED_NODE: node_name}))
            try:
                self.pvc_cache.assume(claim)
            except Exception as e:
                self.pv_cache.restore_all([b.pv for b in new_bindings])
                self.pvc_cache.restore_all([p.pvc for p in new_provisions])
                raise BinderError(str(e)) from e
            new_provisions.append(DynamicProvision(claim))
        volumes.static_bindings = new_bindings
        volumes.dynamic_provisions = new_provisions
        return False

    def revert_assumed(self, volumes: PodVolumes) -> None:
        """RevertAssumedPodVolumes."""
        self.pv_cache.restore_all([b.pv for b in volumes.static_bindings])
        self.pvc_cache.restore_all([p.pvc for p in volumes.dynamic_provisions])


def _claim_getter(storage: StorageLister) -> Callable[[str], PersistentVolumeClaim | None]:
    def get(key: str) -> PersistentVolumeClaim | None:
        namespace, _, name = key.partition("/")
        return storage.claim(namespace, name)

    return get
