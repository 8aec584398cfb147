"""`kubesched snapshot` and `kubesched simulate`: the cluster's state in a file, and what the
scheduler would do with a batch of pods on it, with no write to any cluster.

state.py reads and writes snapshot files, expand.py turns workloads into the pods their controllers
would make, whatif.py adds template nodes and drains nodes, place.py places pods one after another
(each assumed into the cache, as the scheduler's assume does), render.py prints the result.
"""
