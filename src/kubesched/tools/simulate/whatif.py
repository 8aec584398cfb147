"""The what-ifs simulate applies before placing its pods: template nodes added, nodes drained.

A drain is `kubectl drain --ignore-daemonsets --force` followed by the controllers' replacements:
each node is cordoned (spec.unschedulable and the `node.kubernetes.io/unschedulable` NoSchedule
taint the node lifecycle controller adds), its pods leave it, and they come back as pending pods
to place again, highest priority first (then oldest first, as the scheduling queue orders them).
DaemonSet pods and mirror (static) pods stay: drain leaves them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from kubesched.backend.cache.cache import Cache
from kubesched.model.decode import drop_nulls
from kubesched.model.objects import Node, Pod, Taint

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
HOSTNAME_LABEL = "kubernetes.io/hostname"


class WhatIfError(ValueError):
    """A what-if that cannot apply (an unknown node, a bad template); the message says why."""


def template_nodes(template: Mapping[str, Any], count: int, existing: Iterable[str] = ()) -> list[Node]:
    """`count` nodes like the template, named `<template name>-1..count`, each with its own
    kubernetes.io/hostname label (the kubelet sets it), allocatable defaulting to capacity."""
    if template.get("kind") not in (None, "Node"):
        raise WhatIfError(f"--node-template: kind must be Node, not {template.get('kind')!r}")
    base = (template.get("metadata") or {}).get("name")
    if not base:
        raise WhatIfError("--node-template: metadata.name is required (the added nodes are <name>-1..N)")
    taken = set(existing)
    nodes: list[Node] = []
    for i in range(1, count + 1):
        name = f"{base}-{i}"
        if name in taken:
            raise WhatIfError(f"--add-nodes: node {name!r} already exists; give the template another name")
        raw = drop_nulls(dict(template))
        meta = dict(raw.get("metadata") or {})
        meta["name"] = name
        meta["uid"] = f"simulated-node-{name}"
        meta["labels"] = {**(meta.get("labels") or {}), HOSTNAME_LABEL: name}
        status = dict(raw.get("status") or {})
        if not status.get("allocatable"):
            status["allocatable"] = dict(status.get("capacity") or {})
        if not status.get("allocatable"):
            raise WhatIfError("--node-template: status.capacity or status.allocatable is required "
                              "(e.g. {cpu: '4', memory: 16Gi, pods: '110'})")
        try:
            nodes.append(msgspec.convert({**raw, "metadata": meta, "status": status}, Node))
        except msgspec.ValidationError as e:
            raise WhatIfError(f"--node-template: {e}") from None
    return nodes


def cordoned(node: Node) -> Node:
    taints = list(node.spec.taints)
    if not any(t.key == UNSCHEDULABLE_TAINT.key and t.effect == UNSCHEDULABLE_TAINT.effect for t in taints):
        taints.append(UNSCHEDULABLE_TAINT)
    return msgspec.structs.replace(node, spec=msgspec.structs.replace(node.spec, unschedulable=True, taints=taints))


def stays_on_drain(pod: Pod) -> bool:
    return (MIRROR_ANNOTATION in pod.metadata.annotations
            or any(o.controller and o.kind == "DaemonSet" for o in pod.metadata.owner_references))


def drain(cache: Cache, names: Iterable[str]) -> list[Pod]:
    """Cordon the nodes in the cache and take their pods off; the pods to place again, in queue
    order, as pending pods (no node, no nomination)."""
    evicted: list[Pod] = []
    for name in names:
        ni = cache.node_info(name)
        if ni is None:
            raise WhatIfError(f"--drain: no node {name!r} in the cluster")
        cache.update_node(cordoned(ni.node))
        for info in list(ni.pods.values()):
            if stays_on_drain(info.pod):
                continue
            cache.remove_pod(info.pod)
            evicted.append(info.pod)
    evicted.sort(key=lambda p: (-p.spec.priority, p.metadata.creation_timestamp or "", p.key))
    return [pending(p) for p in evicted]


def pending(pod: Pod) -> Pod:
    """The pod as its controller's replacement would be before it is scheduled."""
    return msgspec.structs.replace(
        pod, spec=msgspec.structs.replace(pod.spec, node_name=""),
        status=msgspec.structs.replace(pod.status, phase="Pending", nominated_node_name="", start_time=None))
