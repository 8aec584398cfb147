"""What the loop keeps between cycles (kube-scheduler's pkg/scheduler/backend): the cluster cache
with assume/forget, and the scheduling queue."""
