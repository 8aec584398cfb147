"""Objects and faults that used to stop an informer: nulls Go writes, pod affinity, undecodable
objects, bookmarks with bare objects, credential errors, and a watch that goes silent."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.informer import MIN_WATCH_TIMEOUT, WATCH_GRACE, Codec
from kubesched.api.kubeconfig import KubeconfigError
from kubesched.model.objects import Node, Pod
from tests.unit.api.test_api_informer import (
    FakeApiserver,
    Recorder,
    event_line,
    make_informer,
    pod_json,
    run_until_idle,
)

AFFINITY_TERM = {"labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                 "topologyKey": "kubernetes.io/hostname", "namespaces": ["kube-system"],
                 "namespaceSelector": {}, "matchLabelKeys": ["pod-template-hash"]}


def with_spec(**spec: Any) -> dict[str, Any]:
    pod = pod_json("a", "1")
    pod["spec"].update(spec)
    return pod


# Every one of these is an object the apiserver serves; each failed a typed decode before.
POD_SHAPES = [
    ("coredns-anti-affinity", with_spec(affinity={"podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": AFFINITY_TERM}]}})),
    ("required-affinity", with_spec(affinity={"podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [AFFINITY_TERM]}})),
    ("both-with-node-affinity", with_spec(affinity={
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}},
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [AFFINITY_TERM]},
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [AFFINITY_TERM]}})),
    ("empty-affinity-objects", with_spec(affinity={"podAffinity": {}, "podAntiAffinity": {}})),
    ("null-lists", with_spec(tolerations=None, initContainers=None, nodeSelector=None, schedulingGates=None)),
    ("null-labels", {**pod_json("a", "1"), "metadata": {"name": "a", "namespace": "ns", "uid": "u",
                                                         "resourceVersion": "1", "labels": None}}),
    ("null-requests", with_spec(containers=[{"name": "c", "resources": {"requests": None, "limits": None},
                                             "ports": None}])),
]


@pytest.mark.parametrize("obj", [o for _, o in POD_SHAPES], ids=[i for i, _ in POD_SHAPES])
def test_pod_shapes_decode_in_lists_and_events(obj: dict[str, Any]) -> None:
    codec = Codec(Pod)
    _, items, skipped = codec.decode_list(orjson.dumps({"metadata": {"resourceVersion": "5"}, "items": [obj]}))
    assert (len(items), skipped) == (1, [])
    event = codec.decode_event(event_line("ADDED", obj))
    assert event.obj == items[0]


def test_pod_affinity_is_decoded() -> None:
    pod = Codec(Pod).object.decode(orjson.dumps(POD_SHAPES[2][1]))
    assert pod.spec.affinity is not None
    anti = pod.spec.affinity.pod_anti_affinity
    assert anti is not None
    term = anti.required[0]
    assert term.topology_key == "kubernetes.io/hostname"
    assert term.label_selector is not None
    assert term.label_selector.match_expressions[0].values == ["kube-dns"]
    assert term.namespace_selector is not None  # {} selects every namespace: not the same as absent
    assert term.match_label_keys == ["pod-template-hash"]


def test_node_image_without_names_decodes() -> None:
    # Go's ContainerImage.Names has no omitempty: an image with no tags or digests is "names": null.
    node = {"metadata": {"name": "n1", "resourceVersion": "3"},
            "status": {"allocatable": {"cpu": "4"}, "images": [{"names": None, "sizeBytes": 1},
                                                               {"names": ["pause:3.10"], "sizeBytes": 2}]}}
    _, items, skipped = Codec(Node).decode_list(orjson.dumps({"metadata": {}, "items": [node]}))
    assert skipped == []
    assert [(i.names, i.size_bytes) for i in items[0].status.images] == [([], 1), (["pause:3.10"], 2)]


def test_bookmark_with_a_bare_object_only_moves_the_resource_version() -> None:
    # As the apiserver sends it: every field of the object zero, lists null.
    line = (b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"4711",'
            b'"creationTimestamp":null,"annotations":{"k8s.io/initial-events-end":"true"}},'
            b'"spec":{"containers":null},"status":{}}}')
    event = Codec(Pod).decode_event(line)
    assert (event.type, event.obj, event.resource_version, event.skipped) == ("BOOKMARK", None, "4711", None)


def bad(name: str) -> dict[str, Any]:
    # Not something the apiserver serves for a Pod; stands for any object a decoder cannot read.
    pod = pod_json(name, "2")
    pod["spec"]["priority"] = "high"
    return pod


async def test_an_undecodable_object_is_skipped_not_fatal(recorder: Recorder,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    good_then_changed = pod_json("c", "20", node="n2")
    api = FakeApiserver(lists=[[pod_json("a", "1"), bad("b"), pod_json("c", "3")]],
                        watches=[[event_line("MODIFIED", bad("a")), event_line("MODIFIED", good_then_changed)]])
    informer = make_informer(api, recorder)
    await run_until_idle(informer, api)
    assert informer.relists == 0
    assert recorder.seen == [("add", "a"), ("add", "c"), ("update", "c")]
    assert informer.skipped == 2
    assert informer.store["ns/a"].metadata.resource_version == "1"  # the stored copy stays
    assert "ns/b skipped: it does not decode as a Pod" in caplog.text
    assert api.watch_calls[-1]["resourceVersion"] == "20"


async def test_many_bookmarks_never_relist(recorder: Recorder) -> None:
    bookmark = {"kind": "Pod", "metadata": {"resourceVersion": "300"}, "spec": {"containers": None}}
    api = FakeApiserver(lists=[[pod_json("a", "1")]], watches=[[event_line("BOOKMARK", bookmark)] * 3])
    informer = make_informer(api, recorder)
    await run_until_idle(informer, api)
    assert (len(api.list_calls), informer.relists) == (1, 0)
    assert api.watch_calls[-1]["resourceVersion"] == "300"


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def no_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    async def instant(_: float) -> None:
        return None

    monkeypatch.setattr("kubesched.api.informer.asyncio.sleep", instant)


@pytest.mark.parametrize(("fault", "fatal"), [
    (KubeconfigError("exec credential plugin 'get-token' exited with 1"), True),
    (RuntimeError("unable to perform operation on <TCPTransport closed=True>"), True),
    (ApiError(403, "Forbidden", "pods is forbidden"), True),
    (ApiError(503, "ServiceUnavailable", "etcd leader changed"), False),
], ids=["credentials", "runtime-error", "forbidden", "unavailable"])
async def test_informer_retries_every_failure_and_says_how_long(
        fault: Exception, fatal: bool, recorder: Recorder, no_sleep: None) -> None:
    now = [10.0]
    api = FakeApiserver(lists=[fault, [pod_json("a", "1")], [pod_json("a", "1")]], watches=[fault])
    informer = make_informer(api, recorder)
    informer._clock = lambda: now[0]
    failures: list[tuple[float | None, float | None, str]] = []
    original = informer._failed

    async def record(e: Exception, backoff: Any, *, fatal: bool) -> None:
        await original(e, backoff, fatal=fatal)
        failures.append((informer.failing_since, informer.failing_fatally_since,
                         informer.last_error.split(":")[0]))
        now[0] += 1

    informer._failed = record  # type: ignore[method-assign]
    await run_until_idle(informer, api)
    assert informer.has_synced
    assert recorder.seen == [("add", "a")]
    # Failed at list (t=10), then listed fine, then the watch failed (t=11): the clock restarted.
    name = type(fault).__name__
    assert failures == [(10.0, 10.0 if fatal else None, name), (11.0, 11.0 if fatal else None, name)]


async def test_watch_silence_is_noticed_within_two_minutes(recorder: Recorder) -> None:
    seen: list[tuple[int, float | None]] = []
    api = FakeApiserver(lists=[[pod_json("a", "1")]], watches=[[], [], []])
    stream = api.stream

    def spy(path: str, params: Any = None, *, read_timeout: float | None = None) -> Any:
        seen.append((int(params["timeoutSeconds"]), read_timeout))
        return stream(path, params, read_timeout=read_timeout)

    api.stream = spy  # type: ignore[method-assign]
    await run_until_idle(make_informer(api, recorder), api)
    assert len(seen) == 4
    for timeout, read_timeout in seen:
        assert MIN_WATCH_TIMEOUT <= timeout <= 2 * MIN_WATCH_TIMEOUT
        assert read_timeout == timeout + WATCH_GRACE
    assert 2 * MIN_WATCH_TIMEOUT + WATCH_GRACE <= 120


async def test_informer_is_live_only_while_its_watch_follows_the_apiserver(
        recorder: Recorder, no_sleep: None) -> None:
    """R3's finding: after a broken watch the store may be behind until the next list or watch;
    `live` says so, and the scheduler does not decide on such a store."""
    seen: list[tuple[str, bool]] = []
    api = FakeApiserver(lists=[[pod_json("a", "1")], [pod_json("a", "1")]],
                        watches=[ApiConnectionError("watch stream broke"), ApiError(410, "Expired", "too old"), []])
    informer = make_informer(api, recorder)
    stream, get = api.stream, api.get

    def spy_stream(path: str, params: Any = None, *, read_timeout: float | None = None) -> Any:
        seen.append(("watch", informer.live))
        return stream(path, params, read_timeout=read_timeout)

    async def spy_get(path: str, params: Any = None) -> bytes:
        seen.append(("list", informer.live))
        return await get(path, params)

    api.stream, api.get = spy_stream, spy_get  # type: ignore[method-assign]
    assert not informer.live
    await run_until_idle(informer, api)
    # list, watch (breaks), watch again (410), list again, watch (opens, ends normally), watch again:
    # live only once a watch has opened, and still live when one ends normally.
    assert seen == [("list", False), ("watch", False), ("watch", False), ("list", False), ("watch", False),
                    ("watch", True)]
    assert informer.live
