"""R1 of the reliability suite (issue 15), sized for the test command: kubesched SIGKILLed a few
seconds after each start and started again, through a run on a nearly full cluster with a CronJob
pool: every pod bound, no node overcommitted, the pool kept. The full-size run is
`kubesched chaos kill --nodes 90 --pool-nodes 5 --fill 0.96` (docs/reliability.md).

`kubesched_dev.bench.chaos` runs it on a plane of its own, as the command does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched_dev.bench.chaos import ChaosOptions, run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]


def test_sigkill_every_few_seconds_through_a_nearly_full_run(tmp_path: Path) -> None:
    # 8 general and 2 pool nodes of 60 slots, 95 % full: 570 pods, 57 of them the pool's, created at
    # 20/s so that several kills fall while pods still arrive.
    opts = ChaosOptions(scenario="kill", out=tmp_path, nodes=8, pool_nodes=2, slots=60, fill=0.95, rate=20,
                        kill_every=2.0, timeout=300)
    result = run(opts, progress=lambda m: print(m, flush=True))
    print("\n" + result.summary(), flush=True)
    assert result.error == "", result.summary()
    assert result.pods == 570
    assert result.bound == result.pods
    assert result.overcommitted == {}
    assert result.pool_violations == []
    assert result.tracebacks == []
    assert result.kills >= 3, "too few kills to prove anything: the run finished too soon"
    assert result.ok
