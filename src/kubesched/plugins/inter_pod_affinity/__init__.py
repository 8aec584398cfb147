"""InterPodAffinity (kube-scheduler's interpodaffinity plugin): see plugin.py."""

from kubesched.plugins.inter_pod_affinity.args import InterPodAffinityArgs, parse_args
from kubesched.plugins.inter_pod_affinity.plugin import NAME, InterPodAffinity, new
from kubesched.plugins.inter_pod_affinity.terms import NamespaceLister, NoNamespaces, StaticNamespaces

__all__ = ["NAME", "InterPodAffinity", "InterPodAffinityArgs", "NamespaceLister", "NoNamespaces",
           "StaticNamespaces", "new", "parse_args"]
