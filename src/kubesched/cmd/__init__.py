"""The commands of `kubesched`, one module each (kube-scheduler's cmd/kube-scheduler). `main` is the
click group; `run` is the composition root that wires the scheduler from config, client and plugins."""
