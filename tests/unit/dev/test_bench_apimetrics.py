"""The bench's reading of apiserver_request_total: writes by verb and resource, a pod."""

from __future__ import annotations

import pytest

from kubesched_dev.bench import apimetrics


def _sample(code: int, group: str, resource: str, subresource: str, verb: str, value: int) -> str:
    return (f'apiserver_request_total{{code="{code}",component="apiserver",dry_run="",group="{group}",'
            f'resource="{resource}",scope="resource",subresource="{subresource}",verb="{verb}",version="v1"}} {value}')


EXPOSITION = "\n".join([
    "# HELP apiserver_request_total [STABLE] Counter of apiserver requests",
    "# TYPE apiserver_request_total counter",
    _sample(201, "", "pods", "binding", "POST", 90),
    _sample(409, "", "pods", "binding", "POST", 10),
    _sample(201, "events.k8s.io", "events", "", "POST", 100),
    _sample(200, "", "pods", "status", "PATCH", 7),
    _sample(200, "", "pods", "", "LIST", 3),
    _sample(0, "", "pods", "", "WATCH", 2),
    'apiserver_request_duration_seconds_count{verb="POST"} 5',
])


def test_writes_keep_failures_apart_and_leave_reads_out() -> None:
    assert apimetrics.writes(EXPOSITION) == {
        "POST pods/binding": 90.0, "POST pods/binding 409": 10.0, "POST events.events.k8s.io": 100.0,
        "PATCH pods/status": 7.0}


@pytest.mark.parametrize(("before", "after", "pods", "want"), [
    pytest.param({"POST pods/binding": 10.0}, {"POST pods/binding": 110.0, "PATCH pods/status": 50.0}, 100,
                 {"POST pods/binding": 1.0, "PATCH pods/status": 0.5}, id="grown-most-first"),
    pytest.param({"PUT leases": 5.0}, {"PUT leases": 5.0}, 100, {}, id="unchanged-left-out"),
    pytest.param({}, {"POST pods/binding": 3.0}, 0, {}, id="no-pod-bound"),
])
def test_per_pod(before: dict[str, float], after: dict[str, float], pods: int, want: dict[str, float]) -> None:
    got = apimetrics.per_pod(before, after, pods)
    assert got == want
    assert list(got) == list(want)
