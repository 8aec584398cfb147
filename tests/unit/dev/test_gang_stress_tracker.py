"""The gang stress harness's invariants (kubesched_dev.bench.gang_stress.Tracker), fed watch events
by hand on a fake clock: a gang mid-bind is not a partial gang until it stays so past `settle`, a
finishing gang's deletions are not partial, no gang completing for `stall` is a deadlock."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kubesched_dev.bench.gang_stress import GANG_LABEL, GangPlan, GangRun, Tracker, _Meta, _Pod, _Spec


@dataclass
class Clock:
    t: float = 100.0

    def __call__(self) -> float:
        return self.t


def pod(gang: int, i: int, node: str = "") -> _Pod:
    name = f"gang-{gang:03d}"
    return _Pod(metadata=_Meta(name=f"{name}-{i}", labels={GANG_LABEL: name}), spec=_Spec(nodeName=node))


def tracker(gangs: int = 2, size: int = 3) -> tuple[Tracker, GangRun, Clock]:
    clock = Clock()
    plan = GangPlan(gangs=gangs, size=size, settle=5.0, stall=60.0)
    run = GangRun("s", gangs, size)
    return Tracker(plan, run, clock), run, clock


def test_a_gang_bound_whole_within_settle_is_not_partial() -> None:
    t, run, clock = tracker()
    for i in range(3):
        t.saw("ADDED", pod(0, i))
    for i in range(3):
        clock.t += 0.01
        t.saw("MODIFIED", pod(0, i, "n1"))
    assert not t.tick()
    assert (run.completed, run.max_partial, run.partial, run.max_mid_bind) == (1, 0, [], 1)
    assert run.max_bind_spread == pytest.approx(0.02)
    assert t.to_finish.get_nowait() == "gang-000"


@pytest.mark.parametrize(("bound", "after", "partial"), [
    pytest.param(1, 5.5, ["gang-000: 1/3 bound for more than 5 s"], id="one-of-three-past-settle"),
    pytest.param(2, 5.5, ["gang-000: 2/3 bound for more than 5 s"], id="two-of-three-past-settle"),
    pytest.param(2, 4.0, [], id="two-of-three-within-settle"),
    pytest.param(0, 30.0, [], id="none-bound-is-not-partial"),
])
def test_a_gang_partly_bound_past_settle_is_partial(bound: int, after: float, partial: list[str]) -> None:
    t, run, clock = tracker()
    for i in range(bound):
        t.saw("MODIFIED", pod(0, i, "n1"))
    clock.t += after
    t.tick()
    assert run.partial == partial
    assert run.max_partial == len(partial)


def test_a_gang_stuck_at_several_counts_is_noted_once() -> None:
    t, run, clock = tracker()
    t.saw("MODIFIED", pod(0, 0, "n1"))
    clock.t += 6
    t.tick()
    t.saw("MODIFIED", pod(0, 1, "n1"))
    clock.t += 1
    t.tick()
    assert run.partial == ["gang-000: 2/3 bound for more than 5 s"]
    assert run.max_partial == 1


def test_a_finishing_gang_being_deleted_is_not_partial() -> None:
    t, run, clock = tracker()
    for i in range(3):
        t.saw("MODIFIED", pod(0, i, "n1"))
    t.gangs["gang-000"].finishing = True
    t.saw("DELETED", pod(0, 0, "n1"))
    clock.t += 10
    t.tick()
    assert (run.completed, run.partial, run.max_partial) == (1, [], 0)


def test_an_unbinding_pod_of_a_whole_gang_is_not_counted_twice() -> None:
    t, run, _ = tracker(gangs=1)
    for i in range(3):
        t.saw("MODIFIED", pod(0, i, "n1"))
    t.saw("MODIFIED", pod(0, 2, "n1"))
    assert run.completed == 1
    assert t.tick()  # every gang whole: the run is over


def test_no_gang_completing_for_stall_is_a_deadlock() -> None:
    t, run, clock = tracker()
    for i in range(3):
        t.saw("MODIFIED", pod(0, i, "n1"))
    clock.t += 61
    assert t.tick()
    assert run.deadlock == "no gang completed for 60 s with 1 gang(s) left (3 pod(s) bound)"
    assert not run.ok


def test_pods_of_no_gang_of_the_plan_are_ignored() -> None:
    t, run, _ = tracker()
    t.saw("MODIFIED", _Pod(metadata=_Meta(name="other"), spec=_Spec(nodeName="n1")))
    assert run.max_bound_pods == 0


def test_the_run_is_ok_when_every_gang_completed_whole() -> None:
    t, run, clock = tracker()
    for g in range(2):
        for i in range(3):
            clock.t += 1
            t.saw("MODIFIED", pod(g, i, "n1"))
    assert t.tick()
    assert run.ok, run
    assert (run.max_gangs_at_once, run.max_bound_pods) == (2, 6)
    assert run.longest_wait == pytest.approx(3.0)


def test_chaos_gangs_refuses_more_room_than_nodes(tmp_path: object) -> None:
    from click.testing import CliRunner

    from kubesched_dev.cmd.chaos import chaos
    result = CliRunner().invoke(chaos, ["gangs", "--nodes", "10", "--room", "20", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert "Invalid value for --room: 20 is more than --nodes (10): the room is that many of the nodes" in result.output
    assert "Traceback" not in result.output


def test_chaos_gangs_refuses_an_unknown_contender(tmp_path: object) -> None:
    from click.testing import CliRunner

    from kubesched_dev.cmd.chaos import chaos
    result = CliRunner().invoke(chaos, ["gangs", "--contenders", "kubesched,volcano", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert ("Invalid value for --contenders: 'kubesched,volcano': each must be one of kube-scheduler, kubesched"
            in result.output)
