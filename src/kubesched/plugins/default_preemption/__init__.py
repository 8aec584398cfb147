"""DefaultPreemption (kube-scheduler's defaultpreemption plugin and preemption evaluator): see plugin.py."""

from kubesched.plugins.default_preemption.args import DefaultPreemptionArgs, parse_args
from kubesched.plugins.default_preemption.plugin import NAME, DefaultPreemption, new

__all__ = ["NAME", "DefaultPreemption", "DefaultPreemptionArgs", "new", "parse_args"]
