"""node_declared_features."""
