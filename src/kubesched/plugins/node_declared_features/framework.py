"""component-helpers' nodedeclaredfeatures Framework, the part a scheduler uses: which registered
features a pod needs (InferForPodScheduling), and a node's declared features mapped onto the
registered ones (FeatureMapper.TryMap, MapSorted).

A feature set is the frozenset of the registered names in it; upstream's bitmap over the sorted
names holds the same and compares the same (Equal, IsSubset).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kubesched.model.objects import PodSpec
from kubesched.plugins.node_declared_features.features import ALL_FEATURES, Feature
from kubesched.plugins.node_declared_features.version import Version

FeatureSet = frozenset[str]


class Framework:
    def __init__(self, registry: Iterable[Feature]) -> None:
        self.registry = tuple(sorted(registry, key=lambda f: f.name))
        self.registered = tuple(sorted(f.name for f in self.registry))

    def infer_for_pod_scheduling(self, spec: PodSpec, target: Version | None) -> FeatureSet:
        """The features a node must declare to run the pod. A feature past its MaxVersion at the
        target version is everywhere, so never required."""
        if target is None:
            raise ValueError("target version cannot be nil")
        return frozenset(f.name for f in self.registry
                         if (f.max_version is None or not target.greater_than(f.max_version))
                         and f.infer_for_scheduling(spec))

    def try_map(self, sorted_features: Sequence[str]) -> FeatureSet:
        """The registered features among a node's, unknown ones dropped (TryMap)."""
        return self._map_sorted(sorted_features, ignore_unknown=True)

    def map_sorted(self, sorted_features: Sequence[str]) -> FeatureSet:
        """As try_map, but an unknown feature is an error (MapSorted)."""
        return self._map_sorted(sorted_features, ignore_unknown=False)

    def _map_sorted(self, features: Sequence[str], ignore_unknown: bool) -> FeatureSet:
        # The merge walk of two sorted lists, as upstream: on a list out of order (which the
        # apiserver refuses for status.declaredFeatures) it finds what upstream finds.
        registered = self.registered
        found: list[str] = []
        i = j = 0
        while i < len(features) and j < len(registered):
            if features[i] == registered[j]:
                found.append(registered[j])
                i += 1
                j += 1
            elif features[i] < registered[j]:
                if not ignore_unknown:
                    raise ValueError(f"unknown feature {features[i]}")
                i += 1
            else:
                j += 1
        if not ignore_unknown and i < len(features):
            raise ValueError(f"unknown feature {features[i]}")
        return frozenset(found)


DEFAULT_FRAMEWORK = Framework(ALL_FEATURES)
