"""Whether a claim can be provisioned on a node (binder.go checkVolumeProvisions' checks): the
class's allowed topologies, and CSIStorageCapacity when the class's CSI driver asks for it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kubesched.model.quantity import value
from kubesched.model.storage import CSIStorageCapacity, PersistentVolumeClaim, StorageClass, TopologySelectorTerm
from kubesched.plugins.helper.label_selector import SelectorError, parse
from kubesched.plugins.helper.storage_lister import StorageLister
from kubesched.plugins.volume_binding.matching import STORAGE


def match_topology(terms: Sequence[TopologySelectorTerm], labels: Mapping[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match every node; else some term whose every
    expression has the node's value among its values."""
    if not terms:
        return True
    for term in terms:
        if all(labels.get(e.key) is not None and labels[e.key] in e.values for e in term.match_label_expressions):
            return True
    return False


def has_enough_capacity(storage: StorageLister, sc: StorageClass, pvc: PersistentVolumeClaim,
                        labels: Mapping[str, str]) -> tuple[bool, CSIStorageCapacity | None]:
    """hasEnoughCapacity: only for a CSI driver that asks for capacity tracking; then some
    CSIStorageCapacity of the class, reachable from the node, must hold the claim."""
    text = pvc.spec.resources.requests.get(STORAGE)
    if text is None:
        return True, None
    driver = storage.csi_driver(sc.provisioner)
    if driver is None or not driver.spec.storage_capacity:
        return True, None
    size = value(text)
    for cap in storage.storage_capacities():
        if cap.storage_class_name == sc.metadata.name and _sufficient(cap, size) and _reachable(cap, labels):
            return True, cap
    return False, None


def volume_limit(cap: CSIStorageCapacity) -> int | None:
    """maximumVolumeSize when set (more precise), else capacity; None when neither is known."""
    text = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
    return None if text is None else value(text)


def _sufficient(cap: CSIStorageCapacity, size: int) -> bool:
    limit = volume_limit(cap)
    return limit is not None and limit >= size


def _reachable(cap: CSIStorageCapacity, labels: Mapping[str, str]) -> bool:
    """nodeHasAccess: a capacity without nodeTopology is reachable from no node."""
    if cap.node_topology is None:
        return False
    try:
        return parse(cap.node_topology).matches(labels)
    except SelectorError:
        return False
