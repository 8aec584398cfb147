"""pod_topology_spread."""
