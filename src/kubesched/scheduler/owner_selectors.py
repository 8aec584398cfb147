"""The selector of the pods that share a pod's owners, for PodTopologySpread's system default
constraints: kube-scheduler's helper.DefaultSelector. The Services in the pod's namespace whose
selector matches it, merged, and then its controller's selector if it is a ReplicationController,
ReplicaSet or StatefulSet. Read from the informers' stores, never fetched per pod."""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.framework.handle import Lister
from kubesched.model.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    OwnerReference,
    Pod,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)


def _controller(pod: Pod) -> OwnerReference | None:
    return next((o for o in pod.metadata.owner_references if o.controller), None)


@dataclass
class OwnerSelectors:
    services: Lister[Service]
    replication_controllers: Lister[ReplicationController]
    replica_sets: Lister[ReplicaSet]
    stateful_sets: Lister[StatefulSet]

    def selector_for(self, pod: Pod) -> LabelSelector:
        """An empty selector (matching nothing, as labels.Set{}.AsSelector() in Go does for the
        spread defaults: the caller treats an empty result as "no default constraints") when
        nothing owns the pod."""
        ns, labels = pod.metadata.namespace, pod.metadata.labels
        merged: dict[str, str] = {}
        for svc in self.services.list():
            sel = svc.spec.selector
            # An empty selector never reaches us (Go omits it), and a nil one matches nothing.
            if svc.metadata.namespace == ns and sel and all(labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)
        expressions: list[LabelSelectorRequirement] = []
        owner = _controller(pod)
        if owner is not None:
            key = f"{ns}/{owner.name}"
            kind = (owner.api_version, owner.kind)  # Go compares group, version and kind
            if kind == ("v1", "ReplicationController"):
                rc = self.replication_controllers.get(key)
                if rc is not None:
                    merged.update(rc.spec.selector)
            elif kind in (("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")):
                lister: Lister[ReplicaSet] | Lister[StatefulSet] = (
                    self.replica_sets if owner.kind == "ReplicaSet" else self.stateful_sets)
                obj = lister.get(key)
                if obj is not None and obj.spec.selector is not None:
                    # Go adds the owner's requirements to the Services' selector: matchLabels become
                    # In requirements, so both must hold.
                    owner_selector = obj.spec.selector
                    expressions.extend(LabelSelectorRequirement(key=k, operator="In", values=[v])
                                       for k, v in owner_selector.match_labels.items())
                    expressions.extend(owner_selector.match_expressions)
        return LabelSelector(match_labels=merged, match_expressions=expressions)
