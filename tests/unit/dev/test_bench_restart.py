"""`kubesched bench --restart-check`: its figures, the table and the ratios (no plane)."""

from __future__ import annotations

import pytest

from kubesched_dev.bench import report, restart
from kubesched_dev.bench.report import Restart, RunResult

NAMES = restart.restart_names(3)


def test_restart_names_sort_as_created() -> None:
    assert restart.restart_names(12)[:2] == ["restart-00", "restart-01"]
    assert NAMES == ["restart-0", "restart-1", "restart-2"]


@pytest.mark.parametrize(("ready_at", "bound_at", "want"), [
    pytest.param(102.0, {"restart-0": 104.0, "restart-1": 103.5, "restart-2": 105.0, "pause-9": 1.0},
                 Restart(pods=3, ready_s=2.0, first_bind_s=3.5, all_bound_s=5.0), id="all-bound"),
    pytest.param(102.0, {"restart-1": 103.0}, Restart(pods=3, ready_s=2.0, first_bind_s=3.0), id="some-bound"),
    pytest.param(None, {}, Restart(pods=3), id="nothing-seen"),
])
def test_figures_count_from_the_process_start(ready_at: float | None, bound_at: dict[str, float],
                                              want: Restart) -> None:
    assert restart.figures(100.0, ready_at, bound_at, NAMES) == want


def test_timeout_grows_with_the_pods_to_list() -> None:
    assert restart.timeout_for(0) == 120
    assert restart.timeout_for(50000) == 145


def run(contender: str, first_bind: float | None, rss: float = 100.0, error: str = "") -> RunResult:
    r = RunResult(contender=contender, round=1, mode="batch", nodes=10, pods=100, bound=100, all_bound=True,
                  pods_per_s=100.0, cpu_ms_per_pod=1.0, peak_rss_mb=50.0)
    r.restart = Restart(pods=20, already_bound=100, ready_s=1.0, first_bind_s=first_bind,
                        all_bound_s=None if first_bind is None else first_bind + 1, peak_rss_mb=rss, error=error)
    return r


def test_table_and_ratios_show_the_restart() -> None:
    results = [run("kube-scheduler", 4.0, rss=200.0), run("kubesched", 2.0, rss=50.0)]
    text = report.table(results)
    assert "restart with the pods bound" in text
    line = next(t for t in text.splitlines() if t.startswith("kubesched ") and "2.00" in t and "3.00" in t)
    assert "100" in line
    ratios = report.ratios(report.summarize(results))
    assert ratios["kubesched/kube-scheduler restart first bind"] == 0.5
    assert ratios["kubesched/kube-scheduler restart peak rss"] == 0.25
    assert all(r.correct for r in results)


def test_no_restart_section_without_the_option() -> None:
    r = run("kubesched", 1.0)
    r.restart = None
    assert "restart" not in report.table([r])


def test_a_failed_restart_fails_the_run() -> None:
    r = run("kubesched", None, error="TimeoutError: restart: 0/20 new pods bound")
    assert not r.correct
    assert report.verdict(r) == "FAIL: restart check: TimeoutError: restart: 0/20 new pods bound"
    assert "FAIL: TimeoutError" in report.table([r])
