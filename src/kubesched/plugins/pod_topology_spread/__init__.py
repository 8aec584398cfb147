"""PodTopologySpread: spread pods over topology domains (kube-scheduler's podtopologyspread).

Registered in the in-tree registry (kubesched.plugins.registry), which binds `selectors` to the
scheduler's Service / controller informers; `new(args, handle, selectors=...)` is its factory and
`parse_args` its args parser."""

from kubesched.plugins.pod_topology_spread.args import parse_args
from kubesched.plugins.pod_topology_spread.common import InMemorySelectors, NoSelectors, SelectorLister
from kubesched.plugins.pod_topology_spread.plugin import NAME, PodTopologySpread, new

__all__ = ["NAME", "InMemorySelectors", "NoSelectors", "PodTopologySpread", "SelectorLister", "new", "parse_args"]
