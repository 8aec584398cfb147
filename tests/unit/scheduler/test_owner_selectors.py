"""kube-scheduler's DefaultSelector: Services matching the pod, then its controller's selector."""

from __future__ import annotations

from typing import Generic, TypeVar

import pytest

from kubesched.model.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    ObjectMeta,
    OwnerReference,
    ReplicaSet,
    ReplicationController,
    ReplicationControllerSpec,
    SelectorSpec,
    Service,
    ServiceSpec,
    StatefulSet,
)
from kubesched.scheduler.owner_selectors import OwnerSelectors
from tests.builders import make_pod

T = TypeVar("T")


class Store(Generic[T]):
    def __init__(self, items: dict[str, T]) -> None:
        self.items = items

    def get(self, key: str) -> T | None:
        return self.items.get(key)

    def list(self) -> list[T]:
        return list(self.items.values())


def svc(ns: str, name: str, **selector: str) -> Service:
    return Service(metadata=ObjectMeta(name=name, namespace=ns), spec=ServiceSpec(selector=selector))


LISTERS = OwnerSelectors(
    services=Store({"default/web": svc("default", "web", app="web"), "other/web": svc("other", "web", tier="x"),
                    "default/none": svc("default", "none"), "default/db": svc("default", "db", app="db")}),
    replication_controllers=Store({"default/rc": ReplicationController(
        metadata=ObjectMeta(name="rc", namespace="default"), spec=ReplicationControllerSpec(selector={"rc": "1"}))}),
    replica_sets=Store({"default/rs": ReplicaSet(
        metadata=ObjectMeta(name="rs", namespace="default"),
        spec=SelectorSpec(selector=LabelSelector(match_labels={"pod-template-hash": "abc"})))}),
    stateful_sets=Store({"default/ss": StatefulSet(
        metadata=ObjectMeta(name="ss", namespace="default"),
        spec=SelectorSpec(selector=LabelSelector(match_expressions=[
            LabelSelectorRequirement(key="app", operator="Exists")])))}),
)


def owned(kind: str, name: str, api_version: str, controller: bool = True) -> list[OwnerReference]:
    return [OwnerReference(kind=kind, name=name, api_version=api_version, controller=controller)]


@pytest.mark.parametrize(("owners", "want"), [
    ([], LabelSelector(match_labels={"app": "web"})),
    (owned("ReplicationController", "rc", "v1"), LabelSelector(match_labels={"app": "web", "rc": "1"})),
    (owned("ReplicaSet", "rs", "apps/v1"), LabelSelector(
        match_labels={"app": "web"},
        match_expressions=[LabelSelectorRequirement(key="pod-template-hash", operator="In", values=["abc"])])),
    (owned("StatefulSet", "ss", "apps/v1"), LabelSelector(
        match_labels={"app": "web"}, match_expressions=[LabelSelectorRequirement(key="app", operator="Exists")])),
    (owned("ReplicaSet", "rs", "extensions/v1beta1"), LabelSelector(match_labels={"app": "web"})),
    (owned("ReplicaSet", "rs", "apps/v1", controller=False), LabelSelector(match_labels={"app": "web"})),
    (owned("ReplicaSet", "gone", "apps/v1"), LabelSelector(match_labels={"app": "web"})),
], ids=["services-only", "rc", "replicaset", "statefulset", "other-group", "not-controller", "owner-missing"])
def test_default_selector(owners: list[OwnerReference], want: LabelSelector) -> None:
    pod = make_pod("p").label("app", "web").obj()
    pod.metadata.owner_references = owners
    assert LISTERS.selector_for(pod) == want


def test_nothing_owns_the_pod() -> None:
    assert LISTERS.selector_for(make_pod("p").label("app", "api").obj()) == LabelSelector()
