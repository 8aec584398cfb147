"""dev.perf: the scheduler_perf runner."""
