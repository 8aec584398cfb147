"""`kubesched explain`: why a pod goes (or would go) where it does, node by node.

evaluate.py is the pure evaluation (a Profile, a Snapshot and a PodInfo in, an Explanation out),
cluster.py reads the cluster once (lists, no watch, no writes), render.py turns an Explanation
into a table, JSON or YAML.
"""
