"""NodeVolumeLimits (kube-scheduler nodevolumelimits): see plugin.py."""

from kubesched.plugins.node_volume_limits.plugin import NAME, REASON_MAX_VOLUME_COUNT_EXCEEDED, CSILimits, new

__all__ = ["NAME", "REASON_MAX_VOLUME_COUNT_EXCEEDED", "CSILimits", "new"]
