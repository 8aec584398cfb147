"""default_preemption."""
