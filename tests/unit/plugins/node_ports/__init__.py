"""node_ports."""
