"""Coscheduling: scheduler-plugins' gang scheduling on its PodGroup CRD (off by default)."""

from kubesched.plugins.coscheduling.args import parse_args
from kubesched.plugins.coscheduling.plugin import NAME, Coscheduling, new

__all__ = ["NAME", "Coscheduling", "new", "parse_args"]
