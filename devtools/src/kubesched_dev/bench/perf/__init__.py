"""scheduler_perf's own workloads (performance-config.yaml), run against each contender."""
