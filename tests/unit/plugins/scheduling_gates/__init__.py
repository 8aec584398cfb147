"""scheduling_gates."""
