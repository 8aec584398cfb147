"""node_volume_limits."""
