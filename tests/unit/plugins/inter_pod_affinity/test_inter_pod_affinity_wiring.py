"""InterPodAffinity in kubesched: registered in-tree with its args parser, in the default profile,
reading namespace labels from the scheduler's Namespace informer."""

from __future__ import annotations

from typing import Any

from kubesched.api.client import ApiClient
from kubesched.api.informer import NAMESPACES
from kubesched.api.kubeconfig import ClusterConfig, Credentials
from kubesched.config import load
from kubesched.framework import Handle
from kubesched.model.objects import Namespace, ObjectMeta
from kubesched.plugins.helper.label_selector import parse
from kubesched.plugins.inter_pod_affinity import (
    NAME,
    InformerNamespaces,
    InterPodAffinity,
    NoNamespaces,
    StaticNamespaces,
)
from kubesched.plugins.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler
from tests.builders import label_selector


def _ns(name: str, **labels: str) -> Namespace:
    return Namespace(metadata=ObjectMeta(name=name, labels=labels))


def test_registered_with_its_args_parser() -> None:
    spec = in_tree_registry()[NAME]
    assert spec.args_parser is not None
    errs: list[Any] = []
    assert spec.args_parser({}, "args", errs) == {"hardPodAffinityWeight": 1,
                                                  "ignorePreferredTermsOfExistingPods": False}
    assert errs == []


def test_registry_passes_the_namespaces_port() -> None:
    port = StaticNamespaces({"team-a": {"team": "a"}})
    plugin = in_tree_registry(namespaces=port)[NAME].new({}, Handle())
    assert isinstance(plugin, InterPodAffinity)
    assert plugin.namespaces is port
    default = in_tree_registry()[NAME].new({"hardPodAffinityWeight": 7}, Handle())
    assert isinstance(default, InterPodAffinity)
    assert isinstance(default.namespaces, NoNamespaces)
    assert default.args.hard_pod_affinity_weight == 7


class _Store(dict[str, Namespace]):
    def list(self) -> list[Namespace]:
        return list(self.values())


def test_informer_namespaces_reads_the_store_by_name() -> None:
    store = _Store({"team-a": _ns("team-a", team="a")})
    lister = InformerNamespaces(store)
    assert lister.labels_of("team-a") == {"team": "a"}
    assert lister.labels_of("team-b") is None
    store["team-b"] = _ns("team-b")  # read at each call
    assert lister.labels_of("team-b") == {}
    assert lister.names_matching(parse(label_selector(team="a"))) == {"team-a"}
    store["team-b"] = _ns("team-b", team="a")
    assert lister.names_matching(parse(label_selector(team="a"))) == {"team-a", "team-b"}


def test_scheduler_feeds_the_plugin_from_its_namespace_informer() -> None:
    client = ApiClient(ClusterConfig("https://127.0.0.1:1", None, Credentials(), "test"))
    sched = Scheduler(client, load(None))
    assert sched.namespaces.resource == NAMESPACES
    assert sched.namespaces in sched._informers  # synced before the first cycle, like the others
    plugin = sched.profiles["kubesched"].plugin(NAME)
    assert isinstance(plugin, InterPodAffinity)
    assert plugin.namespaces.labels_of("team-a") is None
    sched.namespaces.store["team-a"] = _ns("team-a", team="a")
    assert plugin.namespaces.labels_of("team-a") == {"team": "a"}
