"""What the apiserver changes in a pod it creates, where placement depends on it (v1.37, feature
gates at their defaults), applied to a pod manifest's spec as plain data.

- Defaulting: a container resource with a limit and no request requests its limit.
- pkg/registry/core/pod PrepareForCreate: `matchLabelKeys` / `mismatchLabelKeys` of the pod
  (anti-)affinity terms (MatchLabelKeysInPodAffinity, GA), and `matchLabelKeys` of the topology spread
  constraints (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta, on), merged into the term's
  labelSelector from the pod's labels: `key In (value)`, `key NotIn (value)` for mismatchLabelKeys,
  for each key the pod has a label for; a term without a labelSelector is left alone. This happens
  once: kube-scheduler reads InterPodAffinity's terms as stored (PodTopologySpread merges the
  labels again itself).

Malformed input is left as it is, for the model's decoding to name it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def prepare_for_create(spec: dict[str, Any], labels: Mapping[str, Any]) -> None:
    """Apply the apiserver's create-time changes to `spec` (a copy the caller owns), in place."""
    for key in ("containers", "initContainers"):
        containers = spec.get(key)
        for c in containers if isinstance(containers, list) else ():
            if isinstance(c, dict):
                requests_from_limits(c)
    for term in _affinity_terms(spec):
        _merge(term, "matchLabelKeys", "In", labels)
        _merge(term, "mismatchLabelKeys", "NotIn", labels)
    constraints = spec.get("topologySpreadConstraints")
    for c in constraints if isinstance(constraints, list) else ():
        if isinstance(c, dict):
            _merge(c, "matchLabelKeys", "In", labels)


def requests_from_limits(container: dict[str, Any]) -> None:
    """The apiserver's defaulting: a resource with a limit and no request requests its limit."""
    resources = container.get("resources") or {}
    limits = resources.get("limits") if isinstance(resources, dict) else None
    requests = resources.get("requests") if isinstance(resources, dict) else None
    if not isinstance(limits, dict) or not limits or not isinstance(requests or {}, dict):
        return
    requests = dict(requests or {})
    for name, value in limits.items():
        requests.setdefault(name, value)
    container["resources"] = {**resources, "requests": requests}


def _affinity_terms(spec: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    affinity = spec.get("affinity")
    if not isinstance(affinity, dict):
        return
    for group_key in ("podAffinity", "podAntiAffinity"):
        group = affinity.get(group_key)
        if not isinstance(group, dict):
            continue
        preferred = group.get("preferredDuringSchedulingIgnoredDuringExecution")
        for w in preferred if isinstance(preferred, list) else ():
            term = w.get("podAffinityTerm") if isinstance(w, dict) else None
            if isinstance(term, dict):
                yield term
        required = group.get("requiredDuringSchedulingIgnoredDuringExecution")
        for term in required if isinstance(required, list) else ():
            if isinstance(term, dict):
                yield term


def _merge(term: dict[str, Any], field: str, operator: str, labels: Mapping[str, Any]) -> None:
    keys = term.get(field)
    selector = term.get("labelSelector")
    if not isinstance(keys, list) or not keys or not isinstance(selector, dict):
        return
    exprs = selector.get("matchExpressions")
    if exprs is not None and not isinstance(exprs, list):
        return
    added = [{"key": key, "operator": operator, "values": [labels[key]]}
             for key in keys if isinstance(key, str) and key in labels]
    if added:
        term["labelSelector"] = {**selector, "matchExpressions": [*(exprs or ()), *added]}
