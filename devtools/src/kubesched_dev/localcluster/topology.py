"""Which nodes a local cluster has: the seed's kind cluster, N identical nodes, or a YAML file.

A topology file looks like::

    nodes:
      - name: pool-1
        labels: {kubesched.io/pool: cronjob}
        taints: [{key: kubesched.io/pool, value: cronjob, effect: NoSchedule}]
        capacity: {cpu: "4", memory: 8Gi, pods: "110"}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.model.quantity import QuantityError, parse_decimal
from kubesched_dev.localcluster.versions import KUBERNETES_VERSION

CONTROL_PLANE_LABEL = "node-role.kubernetes.io/control-plane"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
KWOK_ANNOTATION = "kwok.x-k8s.io/node"

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


class TopologyError(ValueError):
    pass


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True)
class NodeSpec:
    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    capacity: dict[str, str] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        labels = {"kubernetes.io/hostname": self.name, "kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", **self.labels}
        return {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": self.name, "labels": labels,
                         "annotations": {KWOK_ANNOTATION: "fake", "node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in self.taints]},
            "status": {"capacity": dict(self.capacity), "allocatable": dict(self.capacity),
                       "nodeInfo": {"kubeletVersion": KUBERNETES_VERSION, "operatingSystem": "linux",
                                    "architecture": "amd64", "containerRuntimeVersion": "kwok"},
                       "phase": "Running"},
        }


@dataclass(frozen=True)
class Topology:
    name: str
    nodes: tuple[NodeSpec, ...]


_SEED_CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
_BENCH_CAPACITY = {"cpu": "4", "memory": "32Gi", "pods": "110"}


def seed_kind() -> Topology:
    """The seed blog's kind cluster: one tainted control-plane node and three workers."""
    control = NodeSpec("kind-control-plane", {CONTROL_PLANE_LABEL: "", "tier": "control"},
                       (Taint(CONTROL_PLANE_LABEL, "", "NoSchedule"),), dict(_SEED_CAPACITY))
    workers = [NodeSpec(n, {"tier": tier}, (), dict(_SEED_CAPACITY))
               for n, tier in (("kind-worker", "normal"), ("kind-worker2", "normal"), ("kind-worker3", "cronjob"))]
    return Topology("seed-kind", (control, *workers))


def uniform(count: int) -> Topology:
    """N identical nodes shaped like kube-scheduler's own benchmark nodes."""
    if count < 1:
        raise TopologyError(f"--nodes: Invalid value: {count}: must be at least 1")
    width = len(str(count - 1))
    return Topology(f"{count}-nodes", tuple(NodeSpec(f"node-{i:0{width}d}", {}, (), dict(_BENCH_CAPACITY))
                                            for i in range(count)))


BUILT_IN = {"seed-kind": seed_kind}


def resolve(name_or_path: str | None, nodes: int | None) -> Topology:
    if nodes is not None:
        if name_or_path not in (None, "seed-kind"):
            raise TopologyError("--nodes and --topology cannot be combined: give one of them")
        return uniform(nodes)
    if name_or_path is None:
        return seed_kind()
    if name_or_path in BUILT_IN:
        return BUILT_IN[name_or_path]()
    path = Path(name_or_path)
    if not path.exists():
        raise TopologyError(f"--topology: {name_or_path!r} is neither a built-in topology "
                            f"({', '.join(BUILT_IN)}) nor an existing YAML file")
    return load_file(path)


def load_file(path: Path) -> Topology:
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise TopologyError(f"{path}: not valid YAML: {exc}") from None
    return parse(doc, str(path))


def parse(doc: Any, source: str) -> Topology:
    def fail(where: str, msg: str) -> TopologyError:
        return TopologyError(f"{source}: {where}: {msg}")

    if not isinstance(doc, dict):
        raise fail("(top level)", "must be a mapping with a `nodes` list")
    unknown = set(doc) - {"nodes"}
    if unknown:
        raise fail(", ".join(sorted(map(str, unknown))), "unknown field; valid top-level fields: nodes")
    raw_nodes = doc.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        raise fail("nodes", "Required value: a non-empty list of nodes")
    nodes: list[NodeSpec] = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        if not isinstance(raw, dict):
            raise fail(where, "must be a mapping with name, labels, taints, capacity")
        unknown = set(raw) - {"name", "labels", "taints", "capacity"}
        if unknown:
            raise fail(f"{where}.{sorted(map(str, unknown))[0]}",
                       "unknown field; valid fields: name, labels, taints, capacity")
        name = raw.get("name")
        if not isinstance(name, str) or not _DNS_SUBDOMAIN.match(name) or len(name) > 253:
            raise fail(f"{where}.name", f"Invalid value: {name!r}: must be a lowercase DNS-1123 subdomain "
                       "(letters, digits, '-' and '.', starting and ending with a letter or digit)")
        if name in seen:
            raise fail(f"{where}.name", f"Duplicate value: {name!r}")
        seen.add(name)
        labels = _labels(raw.get("labels", {}), f"{where}.labels", fail)
        taints = _taints(raw.get("taints", []), f"{where}.taints", fail)
        capacity = _capacity(raw.get("capacity", {}), f"{where}.capacity", fail)
        nodes.append(NodeSpec(name, labels, taints, capacity))
    return Topology(source, tuple(nodes))


def _labels(raw: Any, where: str, fail: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise fail(where, "must be a mapping of label keys to string values")
    out: dict[str, str] = {}
    for key, val in raw.items():
        if not isinstance(key, str) or not _valid_label_key(key):
            raise fail(f"{where}[{key!r}]", "Invalid value: a label key must be a qualified name "
                       "(optional DNS prefix and '/', then up to 63 alphanumerics, '-', '_' or '.')")
        text = "" if val is None else str(val).lower() if isinstance(val, bool) else str(val)
        if len(text) > 63 or not _LABEL_VALUE.match(text):
            raise fail(f"{where}[{key!r}]", f"Invalid value: {text!r}: a label value must be at most 63 "
                       "alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric")
        out[key] = text
    return out


def _valid_label_key(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(name) <= 63 and bool(_LABEL_NAME.match(name))


def _taints(raw: Any, where: str, fail: Any) -> tuple[Taint, ...]:
    if not isinstance(raw, list):
        raise fail(where, "must be a list of {key, value, effect}")
    out = []
    for j, t in enumerate(raw):
        here = f"{where}[{j}]"
        if not isinstance(t, dict):
            raise fail(here, "must be a mapping with key, value, effect")
        unknown = set(t) - {"key", "value", "effect"}
        if unknown:
            raise fail(f"{here}.{sorted(map(str, unknown))[0]}", "unknown field; valid fields: key, value, effect")
        key = t.get("key")
        if not isinstance(key, str) or not _valid_label_key(key):
            raise fail(f"{here}.key", f"Invalid value: {key!r}: must be a qualified name like example.com/dedicated")
        effect = t.get("effect")
        if effect not in TAINT_EFFECTS:
            raise fail(f"{here}.effect", f"Unsupported value: {effect!r}: supported values: "
                       + ", ".join(f'"{e}"' for e in TAINT_EFFECTS))
        value = "" if t.get("value") is None else str(t.get("value"))
        out.append(Taint(key, value, str(effect)))
    return tuple(out)


def _capacity(raw: Any, where: str, fail: Any) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise fail(where, "must be a mapping of resource names to quantities, like {cpu: '4', memory: 8Gi}")
    out = dict(_SEED_CAPACITY)
    for key, val in raw.items():
        text = str(val)
        try:
            amount = parse_decimal(text)
        except QuantityError as exc:
            raise fail(f"{where}.{key}", f"Invalid value: {text!r}: {exc}") from None
        if amount < 0:
            raise fail(f"{where}.{key}", f"Invalid value: {text!r}: must be greater than or equal to 0")
        out[str(key)] = text
    return out
