"""How a claim is matched to a PersistentVolume, as k8s.io/component-helpers/storage/volume does it
for the PV controller and the scheduler alike (FindMatchingVolume, CheckNodeAffinity,
CheckVolumeModeMismatches, CheckAccessModes, GetBindVolumeToClaim).

The scheduler's path only: a node is always given, so PV node affinity is checked, access modes
too, and unbound PVs are candidates (the PV controller, with no node, leaves them to the scheduler).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal

import msgspec

from kubesched.framework.resources import quantity
from kubesched.model.objects import NodeSelector
from kubesched.model.storage import (
    ANN_BETA_STORAGE_CLASS,
    ANN_BOUND_BY_CONTROLLER,
    VOLUME_AVAILABLE,
    ObjectReference,
    PersistentVolume,
    PersistentVolumeClaim,
)
from kubesched.plugins.helper.label_selector import Selector as LabelMatcher
from kubesched.plugins.helper.label_selector import SelectorError, parse
from kubesched.plugins.helper.node_selector import Selector

FILESYSTEM = "Filesystem"
STORAGE = "storage"

# Parsed PV node affinities: CheckNodeAffinity is the costly part of matching, run for every node.
# Keyed by the affinity object's identity; the entry holds the object, so its id is not reused.
_AFFINITY_CACHE_MAX = 50_000
_affinities: dict[int, tuple[NodeSelector, Selector]] = {}


class MatchError(Exception):
    """A claim that cannot be matched at all (its selector does not parse): kube-scheduler's
    FindMatchingVolume error, which fails the cycle instead of rejecting a node."""


def claim_class(claim: PersistentVolumeClaim) -> str:
    """GetPersistentVolumeClaimClass: the beta annotation first, then the field; "" for none."""
    annotated = claim.metadata.annotations.get(ANN_BETA_STORAGE_CLASS)
    if annotated is not None:
        return annotated
    return claim.spec.storage_class_name or ""


def volume_class(pv: PersistentVolume) -> str:
    annotated = pv.metadata.annotations.get(ANN_BETA_STORAGE_CLASS)
    return annotated if annotated is not None else pv.spec.storage_class_name


def requested_storage(claim: PersistentVolumeClaim) -> Decimal:
    text = claim.spec.resources.requests.get(STORAGE)
    return quantity(text) if text else Decimal(0)


def volume_capacity(pv: PersistentVolume) -> Decimal:
    text = pv.spec.capacity.get(STORAGE)
    return quantity(text) if text else Decimal(0)


def node_affinity_selector(pv: PersistentVolume) -> Selector | None:
    """The PV's required node affinity, parsed once per object; None when it has none."""
    affinity = pv.spec.node_affinity
    if affinity is None or affinity.required is None:
        return None
    required = affinity.required
    hit = _affinities.get(id(required))
    if hit is not None and hit[0] is required:
        return hit[1]
    parsed = Selector.parse(required)
    if len(_affinities) >= _AFFINITY_CACHE_MAX:
        _affinities.clear()
    _affinities[id(required)] = (required, parsed)
    return parsed


def check_node_affinity(pv: PersistentVolume, node_labels: Mapping[str, str]) -> bool:
    """CheckNodeAffinity: True when the node's labels satisfy the PV's required node affinity. Go
    matches a node made of the labels only, so matchFields on metadata.name are not checked."""
    selector = node_affinity_selector(pv)
    return selector is None or selector.matches(node_labels, "")


def volume_mode_mismatch(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """CheckVolumeModeMismatches: an unset mode on either side is Filesystem."""
    return (claim.spec.volume_mode or FILESYSTEM) != (pv.spec.volume_mode or FILESYSTEM)


def attributes_class_mismatch(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """VolumeAttributesClass (GA in v1.34): the claim's and the PV's classes must be the same."""
    return (claim.spec.volume_attributes_class_name or "") != (pv.spec.volume_attributes_class_name or "")


def access_modes_fit(claim: PersistentVolumeClaim, pv: PersistentVolume) -> bool:
    """CheckAccessModes: the PV offers every mode the claim asks for."""
    offered = set(pv.spec.access_modes)
    return all(mode in offered for mode in claim.spec.access_modes)


def is_bound_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: pre-bound or bound to this claim (its uid too, when the ref has one)."""
    ref = pv.spec.claim_ref
    if ref is None:
        return False
    meta = claim.metadata
    if ref.name != meta.name or ref.namespace != meta.namespace:
        return False
    return not ref.uid or ref.uid == meta.uid


def claim_selector(claim: PersistentVolumeClaim) -> LabelMatcher | None:
    """The claim's PV selector, None when it has none. Raises MatchError when it does not parse."""
    if claim.spec.selector is None:
        return None
    try:
        return parse(claim.spec.selector)
    except SelectorError as e:
        meta = claim.metadata
        raise MatchError(f"error creating internal label selector for claim: {meta.namespace}/{meta.name}: {e}") from e


def find_matching_volume(claim: PersistentVolumeClaim, volumes: Iterable[PersistentVolume],
                         node_labels: Mapping[str, str], excluded: Collection[str]) -> PersistentVolume | None:
    """FindMatchingVolume on the scheduler's path: the PV pre-bound to the claim if there is one
    (None if that PV does not fit the node), else the smallest available PV that fits: class,
    size, volume mode, selector, node affinity and access modes. `excluded`: PV names already
    chosen for the pod's other claims. Raises MatchError for a selector that does not parse."""
    requested = requested_storage(claim)
    requested_class = claim_class(claim)
    selector = claim_selector(claim)
    smallest: PersistentVolume | None = None
    smallest_size = Decimal(0)
    for pv in volumes:
        if pv.metadata.name in excluded:
            continue
        bound_here = is_bound_to_claim(pv, claim)
        if pv.spec.claim_ref is not None and not bound_here:
            continue
        size = volume_capacity(pv)
        if (size < requested or volume_mode_mismatch(claim, pv) or attributes_class_mismatch(claim, pv)
                or pv.metadata.deletion_timestamp is not None):
            continue
        fits_node = check_node_affinity(pv, node_labels)
        if bound_here:
            # A pre-bound PV that does not fit this node means no match here, not another PV.
            return pv if fits_node else None
        if pv.status.phase != VOLUME_AVAILABLE:
            # PVs that would match turn Available soon; binding them now would mostly conflict.
            continue
        if selector is not None and not selector.matches(pv.metadata.labels):
            continue
        if volume_class(pv) != requested_class or not fits_node or not access_modes_fit(claim, pv):
            continue
        if smallest is None or smallest_size > size:
            smallest, smallest_size = pv, size
    return smallest


def claim_reference(claim: PersistentVolumeClaim) -> ObjectReference:
    """reference.GetReference for a claim: what a PV's claimRef holds once bound to it."""
    meta = claim.metadata
    return ObjectReference(kind="PersistentVolumeClaim", namespace=meta.namespace, name=meta.name, uid=meta.uid,
                           api_version="v1", resource_version=meta.resource_version)


def bind_volume_to_claim(pv: PersistentVolume, claim: PersistentVolumeClaim) -> tuple[PersistentVolume, bool]:
    """GetBindVolumeToClaim: a copy of the PV bound to the claim (its claimRef, and the
    bound-by-controller annotation unless the user pre-bound it), and whether anything changed."""
    dirty = False
    set_bound_by_controller = not is_bound_to_claim(pv, claim)
    spec, meta = pv.spec, pv.metadata
    ref = spec.claim_ref
    cm = claim.metadata
    if ref is None or ref.name != cm.name or ref.namespace != cm.namespace or ref.uid != cm.uid:
        spec = msgspec.structs.replace(spec, claim_ref=claim_reference(claim))
        dirty = True
    if set_bound_by_controller and ANN_BOUND_BY_CONTROLLER not in meta.annotations:
        meta = msgspec.structs.replace(meta, annotations={**meta.annotations, ANN_BOUND_BY_CONTROLLER: "yes"})
        dirty = True
    return msgspec.structs.replace(pv, metadata=meta, spec=spec), dirty
