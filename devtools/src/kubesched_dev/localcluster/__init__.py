"""The embedded control plane: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
built from their Go modules and started on loopback, kind-like."""
