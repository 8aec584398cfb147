"""node_name."""
