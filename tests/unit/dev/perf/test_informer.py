"""The executor's pod informer: a pod counts as scheduled once, the first time it has a node."""

from __future__ import annotations

import msgspec

from kubesched_dev.bench.perf.informer import PodInformer, PodState, _Pod


def _pod(name: str, node: str = "", attempted: bool = False, ns: str = "a") -> _Pod:
    doc = {"metadata": {"name": name, "namespace": ns, "labels": {"app": "x"}}, "spec": {"nodeName": node},
           "status": {"conditions": [{"type": "PodScheduled"}] if attempted else []}}
    return msgspec.convert(doc, _Pod)


def test_hook_fires_once_when_the_node_first_appears() -> None:
    inf = PodInformer(None)  # type: ignore[arg-type]
    seen: list[str] = []

    def hook(p: PodState) -> None:
        seen.append(p.name)

    inf.hooks.append(hook)
    inf._saw(_pod("p"))
    inf._saw(_pod("p", attempted=True))
    inf._saw(_pod("p", node="n1"))
    inf._saw(_pod("p", node="n1"))
    inf._saw(_pod("q", node="n2"))
    assert seen == ["p", "q"]


def test_counts_split_scheduled_and_attempted() -> None:
    inf = PodInformer(None)  # type: ignore[arg-type]
    for p in (_pod("s", node="n"), _pod("t", attempted=True), _pod("u"), _pod("v", node="n", ns="b")):
        inf._saw(p)
    assert inf.counts("a") == (1, 1)
    assert inf.counts("a", {"app": "other"}) == (0, 0)
    assert [p.name for p in inf.select(None)] == ["s", "t", "u", "v"]
