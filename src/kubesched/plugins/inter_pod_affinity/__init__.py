"""InterPodAffinity (kube-scheduler's interpodaffinity plugin): see plugin.py."""

from kubesched.plugins.inter_pod_affinity.args import InterPodAffinityArgs, parse_args
from kubesched.plugins.inter_pod_affinity.plugin import NAME, InterPodAffinity, new
from kubesched.plugins.inter_pod_affinity.terms import (
    InformerNamespaces,
    NamespaceLister,
    NoNamespaces,
    StaticNamespaces,
)

__all__ = ["NAME", "InformerNamespaces", "InterPodAffinity", "InterPodAffinityArgs", "NamespaceLister",
           "NoNamespaces", "StaticNamespaces", "new", "parse_args"]
