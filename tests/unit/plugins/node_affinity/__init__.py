"""node_affinity."""
