"""The framework's runtime (kube-scheduler's framework/runtime): profiles built from config, the
scheduling cycle's algorithm, the binding cycle's extension points, filters with nominated pods, and
out-of-tree plugin loading."""
