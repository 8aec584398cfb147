"""The scheduling loop (kube-scheduler's pkg/scheduler): the Scheduler that owns it, one pod's
scheduling and binding cycles (schedule_one), the event handlers that feed cache and queue, the
informer sources, and the debugger's cache comparer and dump."""
