"""`kubesched bench`: kubesched against kube-scheduler and a logic-free binder, each on a fresh plane.

Modules: `workload` (pods and their creation), `watcher` (who got bound when), `contenders` (the
three processes under test), `limit` (the logic-free binder, run as its own process), `procstat`
(CPU and peak RSS from /proc), `stats` (throughput samples and latencies), `report` (table and
JSON), `plot` (PNG, needs matplotlib: the `bench` extra), `run` (one round after another).
"""
