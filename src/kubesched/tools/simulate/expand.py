"""Workloads to the pods their controllers would make, as the apiserver would store them.

Names, labels and ownerReferences follow the controllers (v1.37), so what reads them decides as it
would on the cluster: PodTopologySpread's default constraints (the ReplicaSet / StatefulSet
selector), the CronJob pool (Pod -> Job -> CronJob), InterPodAffinity (labels).

- Deployment: a ReplicaSet `<deployment>-<pod-template-hash>`, pods `<replicaset>-<5 chars>`
  labelled `pod-template-hash`. The hash has the controller's shape (FNV-32a, safe-encoded) but not
  its exact value, which hashes Go's printing of the template.
- ReplicaSet, ReplicationController: pods `<name>-<5 chars>`.
- StatefulSet: pods `<name>-<ordinal>` from spec.ordinals.start, with the
  `statefulset.kubernetes.io/pod-name`, `apps.kubernetes.io/pod-index` and
  `controller-revision-hash` labels.
- Job: `parallelism` pods (default 1, at most `completions`), `<job>-<5 chars>`, or
  `<job>-<index>-<5 chars>` when Indexed; the Job controller's labels.
- CronJob: the Job it would start at the current minute, `<cronjob>-<unix minutes>`, and its pods.
- Pod: as given. Service, Namespace, ResourceClaim: added to the stores the plugins read (spread
  defaults, namespaceSelector, DynamicResources); PodGroup and Workload (scheduling.k8s.io) and
  scheduler-plugins' PodGroup (scheduling.x-k8s.io) to the pod groups' (simulate/gangs.py).
- ResourceClaimTemplate: each pod whose `spec.resourceClaims` names it gets the claim the
  resourceclaim controller would make from it (`claims.py`).

The apiserver's defaulting and create-time changes that placement depends on are applied: the
namespace, a container's requests taken from its limits where it has none, and matchLabelKeys /
mismatchLabelKeys merged into the labelSelectors (`create.py`). Admission is not run: a
priorityClassName is not resolved to a priority (set spec.priority), nor a RuntimeClass to its
overhead, nor a LimitRange.
"""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import yaml

from kubesched.model.coscheduling import CoPodGroup
from kubesched.model.decode import drop_nulls
from kubesched.model.objects import Job, Namespace, Pod, ReplicaSet, ReplicationController, Service, StatefulSet
from kubesched.model.resource import ResourceClaim, ResourceClaimTemplate
from kubesched.model.workload import PodGroup, Workload
from kubesched.tools.simulate.claims import apply_defaults, claims_for
from kubesched.tools.simulate.create import prepare_for_create

# k8s.io/apimachinery/pkg/util/rand: the alphabet of generated names and of safe-encoded hashes.
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
WORKLOADS = ("Pod", "Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "Job", "CronJob")
STORED = ("Service", "Namespace", "ResourceClaim", "ResourceClaimTemplate", "PodGroup", "Workload")
# The pod groups' stores: the Workload API's (scheduling.k8s.io) and scheduler-plugins' (scheduling.x-k8s.io).
GROUP_PLURALS = ("podgroups", "workloads", "copodgroups")
# replicas, parallelism, completions: at most this many pods each (Kubernetes' bound on an Indexed
# Job's completions and parallelism, pkg/apis/batch/validation), and at most MAX_PODS in all.
MAX_COUNT = 100_000
MAX_PODS = 1_000_000
# sigs.k8s.io/yaml's decoder (goyaml.v2/decode.go, allowedAliasRatio): up to 400,000 decoded
# nodes, 99 % of them may come from aliases; from 4,000,000 on, 10 %; linear in between. Checked
# only past 100 aliases and 1,000 nodes.
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000


class ExpandError(ValueError):
    """A manifest simulate cannot turn into pods; the message names it and says what is valid."""


@dataclass
class Expanded:
    """The pods, in input order, and the objects their owners add to the stores (by API plural)."""

    pods: list[Pod] = field(default_factory=list)
    objects: dict[str, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add(self, plural: str, obj: Any) -> None:
        self.objects.setdefault(plural, []).append(obj)


def safe_encode(s: str) -> str:
    """rand.SafeEncodeString: each character mapped into ALPHANUMS (no vowels, no look-alikes)."""
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def template_hash(template: Mapping[str, Any]) -> str:
    """A pod-template-hash of the controller's shape: the decimal FNV-32a of the template, encoded."""
    h = 0x811C9DC5
    for b in msgspec.json.encode(template, order="sorted"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return safe_encode(str(h))


def allowed_alias_ratio(decodes: int) -> float:
    if decodes <= ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def alias_expansion_ok(decodes: int, aliases: int) -> bool:
    """goyaml.v2's test: `aliases` of the `decodes` nodes decoded so far came through an alias."""
    return aliases <= 100 or decodes <= 1000 or aliases / decodes <= allowed_alias_ratio(decodes)


class _ExpansionCounter:
    """Walks a composed YAML node graph (an alias is the anchored node met again) in document order
    without expanding it: a node's expanded size is computed once, and an alias adds it at once.
    The ratio only rises inside an alias's expansion, so checking at the end of each is exact."""

    def __init__(self) -> None:
        self.decodes = 0
        self.aliases = 0
        self._sizes: dict[int, int] = {}
        self._open: set[int] = set()
        self._seen: set[int] = set()

    def size(self, node: yaml.Node) -> int:
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        if key in self._open:
            raise ExpandError(f"the YAML anchor {_anchor(node)} contains itself (a recursive alias)")
        self._open.add(key)
        n = 1 + sum(self.size(child) for child in _children(node))
        self._open.discard(key)
        self._sizes[key] = n
        return n

    def walk(self, node: yaml.Node) -> None:
        key = id(node)
        if key in self._seen:  # an alias: its own node, then all of its expansion at once
            n = self.size(node)
            self.decodes += 1 + n
            self.aliases += n
            if not alias_expansion_ok(self.decodes, self.aliases):
                raise ExpandError(
                    f"YAML aliases make {self.aliases:,} of its first {self.decodes:,} nodes, more than the "
                    f"{allowed_alias_ratio(self.decodes):.0%} Kubernetes' YAML decoder (sigs.k8s.io/yaml) allows "
                    f"(99% up to {ALIAS_RATIO_LOW:,} nodes, falling to 10% at {ALIAS_RATIO_HIGH:,}): refused")
            return
        self._seen.add(key)
        self.size(node)  # refuses a recursive alias before it is walked
        self.decodes += 1
        for child in _children(node):
            self.walk(child)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _anchor(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"


class _BoundedLoader(yaml.SafeLoader):
    """yaml.safe_load_all's loader, refusing a document whose aliases expand past the bound before
    anything is built from it."""

    def compose_document(self) -> yaml.Node | None:
        node: yaml.Node | None = super().compose_document()
        if node is not None:
            _ExpansionCounter().walk(node)
        return node


def load_documents(text: str, name: str) -> list[Any]:
    """The YAML (or JSON) documents of `text`, none of them null; raises ExpandError naming `name`
    and the document for excessive aliasing, yaml.YAMLError for what is not YAML."""
    loader = _BoundedLoader(text)
    docs: list[Any] = []
    try:
        while loader.check_data():  # type: ignore[no-untyped-call]
            try:
                doc = loader.get_data()
            except ExpandError as exc:
                raise ExpandError(f"{name}: document {len(docs) + 1}: {exc}") from None
            except RecursionError:
                raise ExpandError(f"{name}: document {len(docs) + 1}: nested too deeply to read") from None
            if doc is not None:
                docs.append(doc)
    finally:
        loader.dispose()
    return docs


class Expander:
    """Turns manifests into pods; `rng` makes the generated name suffixes, `now` (seconds since the
    epoch) the CronJob's scheduled time, both passed in so that tests and reruns are reproducible."""

    def __init__(self, namespace: str = "default", *, rng: random.Random | None = None,
                 now: Callable[[], float] | None = None) -> None:
        self.namespace = namespace
        self.rng = rng or random.Random(0)
        self.now = now or (lambda: 0.0)
        self._uids = 0
        self._pods = 0
        self._templates: dict[tuple[str, str], ResourceClaimTemplate] = {}

    def expand(self, manifests: Iterable[Mapping[str, Any]]) -> Expanded:
        out = Expanded()
        for i, m in enumerate(manifests):
            self._one(m, f"document {i + 1}", out)
        if self._templates:
            # After every document: a template may come after the pods that use it.
            for i, pod in enumerate(out.pods):
                out.pods[i], made = claims_for(pod, self._templates, self._suffix, self._uid)
                for claim in made:
                    out.add("resourceclaims", claim)
        return out

    # --- per kind -----------------------------------------------------------------------------------

    def _one(self, m: Mapping[str, Any], where: str, out: Expanded) -> None:
        if not isinstance(m, Mapping):
            raise ExpandError(f"{where}: expected a Kubernetes object (a map), got {type(m).__name__}")
        kind = m.get("kind")
        if kind == "List":
            for j, item in enumerate(m.get("items") or []):
                self._one(item, f"{where} item {j + 1}", out)
            return
        meta = m.get("metadata") or {}
        name = meta.get("name") or ""
        ns = meta.get("namespace") or self.namespace
        where = f"{where} ({kind or '?'} {ns}/{name or '?'})"
        if kind not in WORKLOADS + STORED:
            raise ExpandError(f"{where}: kind {kind!r} is not one simulate reads; it reads "
                              f"{', '.join(WORKLOADS + STORED)} (and List)")
        if not name and kind != "Pod":
            raise ExpandError(f"{where}: metadata.name is required")
        spec = m.get("spec") or {}
        if kind == "Pod":
            self._budget(1, "the pod", where)
            out.pods.append(self._pod(dict(m), ns, where, name))
        elif kind == "Service":
            out.add("services", _convert({**m, "metadata": {**meta, "namespace": ns}}, Service, where))
        elif kind == "Namespace":
            out.add("namespaces", _convert(m, Namespace, where))
        elif kind == "ResourceClaim":
            claim: ResourceClaim = _convert({**m, "metadata": {**meta, "namespace": ns}}, ResourceClaim, where)
            apply_defaults(claim.spec)
            out.add("resourceclaims", claim)
        elif kind in ("PodGroup", "Workload"):
            _pod_group(m, {**meta, "namespace": ns}, where, out)
        elif kind == "ResourceClaimTemplate":
            claim_template: ResourceClaimTemplate = _convert(m, ResourceClaimTemplate, where)
            apply_defaults(claim_template.spec.spec)
            self._templates[(ns, name)] = claim_template
        elif kind == "Deployment":
            template = _template(spec, where)
            rs_name = f"{name}-{template_hash(template)}"
            rs_uid = self._uid()
            out.add("replicasets", _convert({"metadata": {"name": rs_name, "namespace": ns, "uid": rs_uid},
                                             "spec": {"selector": spec.get("selector")}}, ReplicaSet, where))
            labels = {"pod-template-hash": rs_name.removeprefix(f"{name}-")}
            owner = _owner("apps/v1", "ReplicaSet", rs_name, rs_uid)
            for _ in range(self._budget(_replicas(spec, where), "spec.replicas", where)):
                out.pods.append(self._from_template(template, ns, f"{rs_name}-{self._suffix()}", labels, owner,
                                                    where))
        elif kind in ("ReplicaSet", "ReplicationController"):
            template = _template(spec, where)
            uid = self._uid()
            if kind == "ReplicaSet":
                out.add("replicasets", _convert({"metadata": {"name": name, "namespace": ns, "uid": uid},
                                                 "spec": {"selector": spec.get("selector")}}, ReplicaSet, where))
                owner = _owner("apps/v1", "ReplicaSet", name, uid)
            else:
                selector = spec.get("selector") or (template.get("metadata") or {}).get("labels") or {}
                out.add("replicationcontrollers", _rc(name, ns, uid, selector, where))
                owner = _owner("v1", "ReplicationController", name, uid)
            for _ in range(self._budget(_replicas(spec, where), "spec.replicas", where)):
                out.pods.append(self._from_template(template, ns, f"{name}-{self._suffix()}", {}, owner, where))
        elif kind == "StatefulSet":
            template = _template(spec, where)
            uid = self._uid()
            out.add("statefulsets", _convert({"metadata": {"name": name, "namespace": ns, "uid": uid},
                                              "spec": {"selector": spec.get("selector")}}, StatefulSet, where))
            owner = _owner("apps/v1", "StatefulSet", name, uid)
            revision = f"{name}-{template_hash(template)}"
            start = int((spec.get("ordinals") or {}).get("start") or 0)
            for ordinal in range(start, start + self._budget(_replicas(spec, where), "spec.replicas", where)):
                pod_name = f"{name}-{ordinal}"
                labels = {"controller-revision-hash": revision, "statefulset.kubernetes.io/pod-name": pod_name,
                          "apps.kubernetes.io/pod-index": str(ordinal)}
                out.pods.append(self._from_template(template, ns, pod_name, labels, owner, where))
        elif kind == "Job":
            self._job(name, ns, dict(meta), spec, None, where, out)
        else:  # CronJob
            job_template = spec.get("jobTemplate") or {}
            if not isinstance(job_template, Mapping) or not job_template.get("spec"):
                raise ExpandError(f"{where}: spec.jobTemplate.spec is required")
            scheduled = int(self.now()) // 60
            job_meta = dict(job_template.get("metadata") or {})
            owner = _owner("batch/v1", "CronJob", name, self._uid())
            self._job(f"{name}-{scheduled}", ns, job_meta, job_template["spec"], owner, where, out)

    def _job(self, name: str, ns: str, meta: dict[str, Any], spec: Mapping[str, Any],
             owner: dict[str, Any] | None, where: str, out: Expanded) -> None:
        template = _template(spec, where)
        uid = self._uid()
        job_meta: dict[str, Any] = {"name": name, "namespace": ns, "uid": uid, "labels": meta.get("labels") or {},
                                    "annotations": meta.get("annotations") or {}}
        if owner is not None:
            job_meta["ownerReferences"] = [owner]
        out.add("jobs", _convert({"metadata": job_meta}, Job, where))
        parallelism = _count(spec, "parallelism", 1, where)
        completions = spec.get("completions")
        count = parallelism if completions is None else min(parallelism, _count(spec, "completions", 1, where))
        if spec.get("suspend"):
            count = 0
            out.notes.append(f"{where}: suspended, so it makes no pods")
        self._budget(count, "spec.parallelism" if count == parallelism else "spec.completions", where)
        indexed = spec.get("completionMode") == "Indexed"
        labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                  "controller-uid": uid, "job-name": name}
        job_owner = _owner("batch/v1", "Job", name, uid)
        for index in range(count):
            extra = dict(labels)
            prefix = name
            if indexed:
                extra["batch.kubernetes.io/job-completion-index"] = str(index)
                prefix = f"{name}-{index}"
            out.pods.append(self._from_template(template, ns, f"{prefix}-{self._suffix()}", extra, job_owner, where))

    # --- pods ---------------------------------------------------------------------------------------

    def _from_template(self, template: Mapping[str, Any], ns: str, name: str, labels: Mapping[str, str],
                       owner: dict[str, Any], where: str) -> Pod:
        meta = dict(template.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), **labels}
        meta["ownerReferences"] = [owner]
        body = {"metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}
        return self._pod(body, ns, f"{where} pod {name}", name)

    def _pod(self, body: dict[str, Any], ns: str, where: str, name: str) -> Pod:
        if not name:
            generate = (body.get("metadata") or {}).get("generateName")
            if not generate:
                raise ExpandError(f"{where}: metadata.name or metadata.generateName is required")
            name = f"{generate}{self._suffix()}"
        meta = {**(body.get("metadata") or {}), "name": name, "namespace": ns, "uid": self._uid()}
        spec = copy.deepcopy(body.get("spec") or {})
        labels = meta.get("labels")
        prepare_for_create(spec, labels if isinstance(labels, dict) else {})
        if not spec.get("containers"):
            raise ExpandError(f"{where}: spec.containers must list at least one container")
        pod: Pod = _convert({"metadata": meta, "spec": spec, "status": {"phase": "Pending"}}, Pod, where)
        return pod

    def _budget(self, count: int, field: str, where: str) -> int:
        """`count`, once the pods made so far and these are within MAX_PODS; else ExpandError."""
        if self._pods + count > MAX_PODS:
            raise ExpandError(f"{where}: {field}: the manifests would make more than {MAX_PODS} pods in all "
                              f"({self._pods} before this one; simulate's bound)")
        self._pods += count
        return count

    def _uid(self) -> str:
        self._uids += 1
        digest = hashlib.sha256(f"{self.rng.random()}-{self._uids}".encode()).hexdigest()
        return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"

    def _suffix(self) -> str:
        return "".join(self.rng.choice(ALPHANUMS) for _ in range(5))


def _pod_group(m: Mapping[str, Any], meta: Mapping[str, Any], where: str, out: Expanded) -> None:
    api = str(m.get("apiVersion") or "")
    body = {**m, "metadata": meta}
    if m.get("kind") == "PodGroup" and api.startswith("scheduling.x-k8s.io/"):
        out.add("copodgroups", _convert(body, CoPodGroup, where))
    elif api.startswith("scheduling.k8s.io/"):
        out.add("podgroups" if m.get("kind") == "PodGroup" else "workloads",
                _convert(body, PodGroup if m.get("kind") == "PodGroup" else Workload, where))
    else:
        raise ExpandError(f"{where}: apiVersion {api!r}: a {m.get('kind')} of scheduling.k8s.io/v1beta1 "
                          "(or a PodGroup of scheduling.x-k8s.io/v1alpha1)")


def _template(spec: Mapping[str, Any], where: str) -> dict[str, Any]:
    template = spec.get("template")
    if not isinstance(template, Mapping) or not template.get("spec"):
        raise ExpandError(f"{where}: spec.template.spec is required")
    return dict(template)


def _count(spec: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = spec.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
        raise ExpandError(f"{where}: spec.{key} must be a whole number >= 0 and at most {MAX_COUNT} "
                          f"(simulate's bound on the pods one workload makes), not {value!r}")
    return value


def _replicas(spec: Mapping[str, Any], where: str) -> int:
    return _count(spec, "replicas", 1, where)


def _owner(api_version: str, kind: str, name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True,
            "blockOwnerDeletion": True}


def _rc(name: str, ns: str, uid: str, selector: Mapping[str, str], where: str) -> Any:
    return _convert({"metadata": {"name": name, "namespace": ns, "uid": uid}, "spec": {"selector": selector}},
                    ReplicationController, where)


def _convert(obj: Any, type_: type[Any], where: str) -> Any:
    try:
        return msgspec.convert(drop_nulls(obj), type_)
    except msgspec.ValidationError as e:
        raise ExpandError(f"{where}: {e}") from None
