"""node_resources."""
