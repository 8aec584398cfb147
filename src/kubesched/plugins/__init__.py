"""kube-scheduler's in-tree plugins that kubesched implements, one module each."""
