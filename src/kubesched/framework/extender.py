"""Scheduler extenders (kube-scheduler's fwk.Extender): the webhooks a KubeSchedulerConfiguration
lists under `extenders`. The scheduling cycle asks them after the Filter plugins (filter) and beside
the Score plugins (prioritize), preemption asks them about its candidates (process preemption), and
the first interested binder binds instead of the Bind plugins.

The framework sees an extender through the `Extender` port, so it stays free of I/O; the HTTP
implementation is kubesched.api.extender, wired in by the composition root. What an extender's
config says about it (name, interest, which verbs it has) is pure and lives in `ConfiguredExtender`,
which both that implementation and the tests' fakes build on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from kubesched.framework.interface import MAX_NODE_SCORE
from kubesched.framework.snapshot import Snapshot
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.model.objects import Container, Node, Pod

# extender/v1: the range of the scores an extender's prioritize verb gives.
MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
# The plugin name a pod's attempt records when extenders rejected nodes (framework.ExtenderName):
# extenders register no events, so such a pod comes back on any cluster event.
EXTENDER_NAME = "Extender"
# kube-scheduler's DefaultExtenderTimeout: an httpTimeout of 0 means this.
DEFAULT_EXTENDER_TIMEOUT = 5.0


@dataclass(frozen=True)
class ExtenderManagedResource:
    name: str
    ignored_by_scheduler: bool = False


@dataclass(frozen=True)
class ExtenderTLSConfig:
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    cert_data: bytes = b""
    key_data: bytes = b""
    ca_data: bytes = b""


@dataclass(frozen=True)
class ExtenderConfig:
    """One `extenders[i]` entry of the configuration, validated (kubescheduler.config.k8s.io/v1 Extender)."""

    url_prefix: str
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 0
    bind_verb: str = ""
    enable_https: bool = False
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: float = 0.0  # seconds; 0: DEFAULT_EXTENDER_TIMEOUT
    node_cache_capable: bool = False
    managed_resources: tuple[ExtenderManagedResource, ...] = ()
    ignorable: bool = False

    @property
    def timeout(self) -> float:
        return self.http_timeout or DEFAULT_EXTENDER_TIMEOUT


class ExtenderError(Exception):
    """An extender call that failed; its text is the error kube-scheduler words for the same failure
    (it becomes the FailedScheduling message when the extender is not ignorable)."""


@dataclass
class Victims:
    """The pods preemption would evict on one node, most important first, and how many of them
    break a PodDisruptionBudget (extender/v1 Victims)."""

    pods: list[PodInfo]
    num_pdb_violations: int = 0


@dataclass
class FilterResult:
    """What an extender's filter kept (the nodes as it returned them) and the nodes it rejected,
    by name, with their messages (extender/v1 FailedNodesMap)."""

    nodes: list[NodeInfo]
    failed: dict[str, str] = field(default_factory=dict)
    failed_and_unresolvable: dict[str, str] = field(default_factory=dict)


@runtime_checkable
class Extender(Protocol):
    """kube-scheduler's fwk.Extender. The calls that reach the extender are coroutines and raise
    ExtenderError when they fail."""

    def name(self) -> str: ...

    async def filter(self, pod: Pod, nodes: Sequence[NodeInfo]) -> FilterResult: ...

    async def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[list[tuple[str, int]], int]:
        """(host, score) pairs as the extender gave them, and the weight they count with."""
        ...

    async def bind(self, pod: Pod, node: str) -> None: ...

    def is_binder(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_filter(self) -> bool: ...

    async def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                                 snapshot: Snapshot) -> dict[str, Victims]:
        """The candidates the extender keeps, each with the victims it wants (looked up in `snapshot`)."""
        ...

    def supports_preemption(self) -> bool: ...

    def is_ignorable(self) -> bool: ...


def _uses(managed: AbstractSet[str], containers: Iterable[Container]) -> bool:
    for c in containers:
        if any(name in managed for name in c.resources.requests):
            return True
        if any(name in managed for name in c.resources.limits):
            return True
    return False


def interested(managed: AbstractSet[str], pod: Pod) -> bool:
    """HTTPExtender.IsInterested: every pod when no resource is managed, else a pod whose containers
    or init containers request or limit one of them."""
    if not managed:
        return True
    return _uses(managed, pod.spec.containers) or _uses(managed, pod.spec.init_containers)


class ConfiguredExtender:
    """What an extender's configuration alone decides: its name (the URL prefix), its interest in a
    pod and which verbs it serves."""

    def __init__(self, config: ExtenderConfig) -> None:
        self.config = config
        self.managed = frozenset(r.name for r in config.managed_resources)

    def name(self) -> str:
        return self.config.url_prefix

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_interested(self, pod: Pod) -> bool:
        return interested(self.managed, pod)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.config.url_prefix!r})"


def ordered(extenders: Iterable[Extender]) -> tuple[Extender, ...]:
    """buildExtenders' order: the configured order, the ignorable ones moved to the end."""
    found = tuple(extenders)
    return tuple(e for e in found if not e.is_ignorable()) + tuple(e for e in found if e.is_ignorable())


def extender_score(score: int, weight: int) -> int:
    """An extender's score for a node in the Score plugins' range: score * weight * (MaxNodeScore /
    MaxExtenderPriority), wrapping around as Go's int64 does."""
    return wrap_int64(score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY))


def wrap_int64(value: int) -> int:
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def bare_node_info(node: Node) -> NodeInfo:
    """The NodeInfo kube-scheduler makes of a Node an extender returns (NewNodeInfo + SetNode): the
    node alone, without pods, requests or the image states the cache would add."""
    ni = NodeInfo(node)
    ni.image_sizes = {}
    return ni


def victims_from_meta(extender: str, meta: Mapping[str, tuple[Sequence[str], int]],
                      snapshot: Snapshot) -> dict[str, Victims]:
    """convertToVictims: each node's victims (pod UIDs, PDB violations) as the snapshot's pods.
    Raises ExtenderError for a node or a pod the snapshot does not have."""
    out: dict[str, Victims] = {}
    for node, (uids, violations) in meta.items():
        row = snapshot.index.get(node)
        if row is None:
            raise ExtenderError(f"nodeinfo not found for node name {go_quote(node)}")
        ni = snapshot.node_infos[row]
        by_uid = {p.pod.metadata.uid: p for p in ni.pods.values()}
        pods: list[PodInfo] = []
        for uid in uids:
            found = by_uid.get(uid)
            if found is None:
                raise ExtenderError(f"extender: {extender} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                    f"{ni.name}, but the pod is not found on that node")
            pods.append(found)
        out[node] = Victims(pods, violations)
    return out


def go_quote(text: str) -> str:
    """A string as Go's %q writes it (strconv.Quote) for the printable ASCII and UTF-8 text names hold."""
    out = ['"']
    for ch in text:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)
