"""R5 of the reliability suite (issue 15), the plane half: objects the apiserver accepts but that are
odd — unknown extended resources, 100,000-CPU requests, huge init containers, missing claims, a node
without allocatable, tolerate-everything pods, and pods hypothesis makes by combining such fields.
Every pod gets an answer within seconds (bound, or PodScheduled=False with a message: never
silence), and a normal pod created next to them still binds.

A plane of its own: its odd node would change the node counts the session plane's tests compare.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kubesched_dev.localcluster.topology import NodeSpec, Taint, Topology
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import (
    KUBESCHED,
    container,
    create_pod,
    own_plane,
    pod_manifest,
    scheduled_condition,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ANSWER_WITHIN = 30.0  # seconds for all of a batch; each pod's own answer comes in about one cycle
CAPACITY = {"cpu": "4", "memory": "8Gi", "pods": "110"}
TOLERATE_ALL = [{"operator": "Exists"}]


@pytest.fixture(scope="module")
def odd_plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Kube, KubeschedProcess]]:
    topology = Topology("r5", (NodeSpec("plain", capacity=dict(CAPACITY)),
                               NodeSpec("tainted", taints=(Taint("dedicated", "x", "NoSchedule"),),
                                        capacity=dict(CAPACITY))))
    with own_plane("r5", topology, default_scheduler=False) as kube:
        # A node without allocatable (the apiserver copies capacity into a missing allocatable, so
        # without capacity either; and not kwok's, which would give it a default capacity): it
        # offers nothing, not even a pod slot, to the pods that tolerate whatever taints it gets.
        bare = NodeSpec("no-allocatable").manifest()
        del bare["status"]["allocatable"], bare["status"]["capacity"]
        del bare["metadata"]["annotations"]
        kube.create("/api/v1/nodes", bare)
        proc = KubeschedProcess(kube, [], tmp_path_factory.mktemp("r5") / "kubesched.log")
        try:
            yield kube, proc
        finally:
            proc.stop()


def _answer(pod: dict[str, Any]) -> str | None:
    """The node, or the PodScheduled=False message; None while the pod has neither."""
    if pod["spec"].get("nodeName"):
        return f"bound to {pod['spec']['nodeName']}"
    cond = scheduled_condition(pod) or {}
    if cond.get("status") == "False" and cond.get("message"):
        return f"{cond.get('reason')}: {cond['message']}"
    return None


def _answers(kube: Kube, ns: str, names: list[str]) -> dict[str, str]:
    def all_answered() -> dict[str, str] | None:
        by_name = {p["metadata"]["name"]: _answer(p) for p in kube.pods(ns)}
        if all(by_name.get(n) for n in names):
            return {n: str(by_name[n]) for n in names}
        return None
    started = time.monotonic()
    got = wait_for(f"an answer for every pod of {ns}", all_answered, timeout=ANSWER_WITHIN, interval=0.5)
    print(f"\n{len(names)} pods answered within {time.monotonic() - started:.1f} s", flush=True)
    return got


def _spec(containers: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {"containers": containers, **more}


ODD = {
    "unknown-extended-resource": (_spec([container(extra={"example.com/unobtainium": "1"})]),
                                  "Insufficient example.com/unobtainium"),
    "hundred-thousand-cpus": (_spec([container(cpu="100000")]), "Insufficient cpu"),
    "huge-init-container": (_spec([container(cpu="10m")], initContainers=[
        container(name="init", cpu="50000", memory="1Pi")]), "Insufficient cpu"),
    "huge-ephemeral-storage": (_spec([container(extra={"ephemeral-storage": "1Ei"})]),
                               "Insufficient ephemeral-storage"),
    "missing-claim": (_spec([container()], volumes=[{"name": "v", "persistentVolumeClaim": {"claimName": "nope"}}]),
                      'persistentvolumeclaim "nope" not found'),
    "selector-nobody-matches": (_spec([container()], nodeSelector={"no-such-label": "x"}),
                                "didn't match Pod's node affinity/selector"),
    "spread-over-a-missing-key": (_spec([container()], topologySpreadConstraints=[{
        "maxSkew": 1, "topologyKey": "no-such-key", "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "x"}}}]), "didn't match pod topology spread constraints"),
    "tolerate-everything": (_spec([container(cpu="10m")], tolerations=TOLERATE_ALL), "bound to"),
    "fifty-containers": (_spec([container(name=f"c{i}", cpu="1m") for i in range(50)]), "bound to"),
    "no-requests-at-all": (_spec([{"name": "c", "image": "pause"}]), "bound to"),
}


def test_odd_pods_each_get_their_answer_and_a_normal_pod_still_binds(
        odd_plane: tuple[Kube, KubeschedProcess]) -> None:
    kube, proc = odd_plane
    raw = kube.get("/api/v1/nodes/no-allocatable")
    assert "allocatable" not in raw["status"] or not raw["status"]["allocatable"], raw["status"]
    ns = kube.namespace("r5-odd")
    for name, (spec, _) in ODD.items():
        create_pod(kube, ns, pod_manifest(name, KUBESCHED, spec))
    answers = _answers(kube, ns, list(ODD))
    for name, (_, expected) in ODD.items():
        assert expected in answers[name], (name, answers[name])
        assert "no-allocatable" not in answers[name], (name, answers[name])  # it offers nothing
    create_pod(kube, ns, pod_manifest("normal", KUBESCHED, _spec([container(cpu="100m")])))
    assert _answers(kube, ns, ["normal"])["normal"] == "bound to plain"
    assert proc.proc.poll() is None
    assert "Traceback" not in proc.log()


_BATCH = itertools.count()

# Fields hypothesis combines into pods; each is accepted by the apiserver.
REQUESTS = st.fixed_dictionaries({}, optional={
    "cpu": st.sampled_from(["0", "1m", "10m", "3", "5", "100000"]),
    "memory": st.sampled_from(["0", "1", "16Mi", "7Gi", "9Gi", "1Pi"]),
    "example.com/widgets": st.sampled_from(["1", "1000"]),
    "ephemeral-storage": st.sampled_from(["1Ki", "1Ei"]),
})
CONTAINER = st.builds(lambda i, req: container(name=f"c{i}", extra=req), st.integers(0, 3), REQUESTS)
POD = st.fixed_dictionaries(
    {"containers": st.lists(CONTAINER, min_size=1, max_size=3, unique_by=lambda c: c["name"])},
    optional={
        "initContainers": st.lists(st.builds(lambda req: container(name="init", extra=req), REQUESTS),
                                   max_size=1),
        "tolerations": st.sampled_from([TOLERATE_ALL, [{"key": "dedicated", "operator": "Exists"}], []]),
        "nodeSelector": st.sampled_from([{"kubernetes.io/hostname": "tainted"}, {"missing": "x"}, {}]),
    })


# Hypothesis tries the simplest pods first (no optional field), then random ones: 6 batches of 10.
@settings(max_examples=6, deadline=None, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_generated_odd_pods_each_get_an_answer(odd_plane: tuple[Kube, KubeschedProcess],
                                               data: st.DataObject) -> None:
    kube, proc = odd_plane
    specs: list[dict[str, Any]] = data.draw(st.lists(POD, min_size=10, max_size=10), label="pods")
    ns = kube.namespace(f"r5-gen-{next(_BATCH)}")
    names = [f"gen-{i:02d}" for i in range(len(specs))]
    for name, spec in zip(names, specs, strict=True):
        create_pod(kube, ns, pod_manifest(name, KUBESCHED, spec))
    answers = _answers(kube, ns, names)
    bound = sum(1 for a in answers.values() if a.startswith("bound"))
    print(f"{bound} bound, {len(names) - bound} PodScheduled=False with a message", flush=True)
    for name, answer in answers.items():
        assert "no-allocatable" not in answer, (name, answer)
    create_pod(kube, ns, pod_manifest("normal", KUBESCHED, _spec([container(cpu="10m")])))
    assert _answers(kube, ns, ["normal"])["normal"].startswith("bound to")
    assert proc.proc.poll() is None
    assert "Traceback" not in proc.log()
