"""In-tree PVs read as CSI ones on nodes that migrated their plugin (kube-scheduler binder.go
tryTranslatePVToCSI, with k8s.io/csi-translation-lib v0.37's TranslateInTreePVToCSI).

A bound PV of GCE PD, AWS EBS, Azure Disk, OpenStack Cinder or Portworx, on a node whose CSINode
lists that plugin in its migrated-plugins annotation, has its node affinity checked as the
translation writes it: the zone key of its affinity becomes the CSI driver's topology key (or, with
no zone in its affinity, its zone label is added under that key), and the beta region key becomes
the GA one. A node without the CSI driver's topology label then no longer fits. Only the node
affinity (and the translation's errors) are translated: they are all the binder reads of the result.
"""

from __future__ import annotations

import msgspec

from kubesched.model.objects import NodeSelector, NodeSelectorRequirement, NodeSelectorTerm
from kubesched.model.storage import ANN_MIGRATED_PLUGINS, CSINode, PersistentVolume, VolumeNodeAffinity
from kubesched.plugins.helper import csi_translation as tr

GCE_PD_TOPOLOGY_KEY = "topology.gke.io/zone"
AWS_EBS_TOPOLOGY_KEY = "topology.ebs.csi.aws.com/zone"
CINDER_TOPOLOGY_KEY = "topology.cinder.csi.openstack.org/zone"
# Azure Disk and Portworx translate no topology.
_TOPOLOGY_KEYS = {tr.GCE_PD: GCE_PD_TOPOLOGY_KEY, tr.AWS_EBS: AWS_EBS_TOPOLOGY_KEY, tr.CINDER: CINDER_TOPOLOGY_KEY}

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
_MULTI_ZONE_DELIMITER = "__"

_CACHE_MAX = 4096
# id(pv) -> (pv, its translation or the translation's error): a PV is translated once, not per node.
_translated: dict[int, tuple[PersistentVolume, PersistentVolume | tr.TranslationError]] = {}


def migrated_on_node(plugin_name: str, csi_node: CSINode | None) -> bool:
    """isPluginMigratedToCSIOnNode: the annotation split on "," as Go splits it (no trimming)."""
    if csi_node is None:
        return False
    listed = csi_node.metadata.annotations.get(ANN_MIGRATED_PLUGINS, "")
    return bool(listed) and plugin_name in listed.split(",")


def try_translate_pv_to_csi(pv: PersistentVolume, csi_node: CSINode | None) -> PersistentVolume:
    """The PV as the binder checks it on the CSINode's node: translated when its in-tree plugin is
    migrated there, else unchanged. Raises TranslationError worded as tryTranslatePVToCSI."""
    plugin = tr.in_tree_plugin(pv.spec)
    if plugin is None or plugin.name not in tr.MIGRATION_ON or not migrated_on_node(plugin.name, csi_node):
        return pv
    hit = _translated.get(id(pv))
    if hit is None or hit[0] is not pv:
        try:
            found: PersistentVolume | tr.TranslationError = _translate(pv, plugin)
        except tr.TranslationError as e:
            found = tr.TranslationError(f"could not translate pv: {e}")
        if len(_translated) >= _CACHE_MAX:
            _translated.clear()
        hit = _translated[id(pv)] = (pv, found)
    if isinstance(hit[1], tr.TranslationError):
        raise hit[1]
    return hit[1]


def migratable_plugin(pv: PersistentVolume) -> str | None:
    """The in-tree plugin by which some node could read this PV as a CSI one (its migration is on)."""
    plugin = tr.in_tree_plugin(pv.spec)
    return plugin.name if plugin is not None and plugin.name in tr.MIGRATION_ON else None




def _translate(pv: PersistentVolume, plugin: tr.InTreePlugin) -> PersistentVolume:
    tr.pv_volume_handle(plugin, pv)  # the translation's errors come from the volume handle
    key = _TOPOLOGY_KEYS.get(plugin.name)
    if key is None:
        return pv
    affinity = translate_topology(pv, key)
    return msgspec.structs.replace(pv, spec=msgspec.structs.replace(pv.spec, node_affinity=affinity))


def _terms(affinity: VolumeNodeAffinity | None) -> list[NodeSelectorTerm]:
    if affinity is None or affinity.required is None:
        return []
    return affinity.required.node_selector_terms


def _has_key(terms: list[NodeSelectorTerm], key: str) -> bool:
    return any(r.key == key for t in terms for r in t.match_expressions)


def _values(terms: list[NodeSelectorTerm], key: str) -> list[str]:
    """getTopologyValues: the values of every requirement on `key`, sorted, once each."""
    return sorted({v for t in terms for r in t.match_expressions if r.key == key for v in r.values})


def _topology_labels(pv: PersistentVolume) -> tuple[str, str]:
    """getTopologyLabel: the GA keys unless the PV's affinity (first) or labels use the beta zone."""
    terms, labels = _terms(pv.spec.node_affinity), pv.metadata.labels
    if _has_key(terms, ZONE):
        return ZONE, REGION
    if _has_key(terms, BETA_ZONE):
        return BETA_ZONE, BETA_REGION
    if ZONE in labels:
        return ZONE, REGION
    if BETA_ZONE in labels:
        return BETA_ZONE, BETA_REGION
    return ZONE, REGION


def _replaced(terms: list[NodeSelectorTerm], old: str, new: str) -> list[NodeSelectorTerm]:
    return [msgspec.structs.replace(t, match_expressions=[
        msgspec.structs.replace(r, key=new) if r.key == old else r for r in t.match_expressions]) for t in terms]


def translate_topology(pv: PersistentVolume, csi_key: str) -> VolumeNodeAffinity | None:
    """translateTopologyFromInTreeToCSI: the PV's node affinity with CSI topology."""
    affinity = pv.spec.node_affinity
    terms = _terms(affinity)
    zone_label, region_label = _topology_labels(pv)
    if _values(terms, zone_label):
        terms = _replaced(terms, zone_label, csi_key)
    elif zone_label in pv.metadata.labels:
        zones = sorted({z.strip() for z in pv.metadata.labels[zone_label].split(_MULTI_ZONE_DELIMITER)} - {""})
        if zones:  # addTopology; with no zone its error is ignored and nothing is added
            requirement = NodeSelectorRequirement(key=csi_key, operator="In", values=zones)
            terms = [msgspec.structs.replace(t, match_expressions=[*t.match_expressions, requirement])
                     for t in (terms or [NodeSelectorTerm()])]
    if region_label == BETA_REGION and _values(terms, BETA_REGION):
        terms = _replaced(terms, BETA_REGION, REGION)
    if not terms and (affinity is None or affinity.required is None):
        return affinity
    return VolumeNodeAffinity(required=NodeSelector(node_selector_terms=terms))
