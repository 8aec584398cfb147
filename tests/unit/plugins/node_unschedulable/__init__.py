"""node_unschedulable."""
