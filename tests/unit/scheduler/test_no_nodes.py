"""A cluster with no node: kube-scheduler v1.37.2's schedulePod returns ErrNoNodesAvailable
("no nodes available to schedule pods", scheduler.go) before any plugin runs, and
schedulingAlgorithm (schedule_one.go) answers UnschedulableAndUnresolvable with clearNominatedNode
without running PostFilter; handleSchedulingFailure writes that text as the event and condition
(reason Unschedulable) and clears status.nominatedNodeName."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from kubesched.api.client import Response
from kubesched.framework.runtime.framework import run_post_filter
from kubesched.model.objects import PodStatus
from kubesched.scheduler import schedule_one as cycles
from tests.builders import make_pod
from tests.unit.scheduler.test_scheduler_binding import enqueue, make_scheduler, pop

NO_NODES = "no nodes available to schedule pods"


async def ok(_: str, __: str) -> Response:
    return Response(200, b"{}")


def test_no_nodes_skips_post_filter_and_clears_the_nomination(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[Any] = []
    def recording(*args: Any) -> Any:
        ran.append(args)
        return run_post_filter(*args)

    monkeypatch.setattr(cycles, "run_post_filter", recording)
    sched, _ = make_scheduler(ok)
    sched.cache.remove_node("n1")
    pod = make_pod("p").scheduler("kubesched").obj()
    pod = msgspec.structs.replace(pod, status=PodStatus(nominated_node_name="gone"))
    enqueue(sched, pod)
    sched.schedule_one(pop(sched))
    assert ran == []
    _, message, reason, nominated = sched.conditions._pending[pod.metadata.uid]
    assert (message, reason, nominated) == (NO_NODES, "Unschedulable", "")
    assert sched.queue.nominator.nominated_pods_for_node("gone") == []
    # No plugin rejected it: it goes back after its backoff, not to wait for an event.
    assert sched.queue.where(pod.metadata.uid) == "backoff"
