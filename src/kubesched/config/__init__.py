"""kube-scheduler's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate."""
