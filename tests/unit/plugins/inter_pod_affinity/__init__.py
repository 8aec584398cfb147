"""inter_pod_affinity."""
