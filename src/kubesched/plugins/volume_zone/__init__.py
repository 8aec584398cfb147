"""VolumeZone (kube-scheduler volumezone): see plugin.py."""

from kubesched.plugins.volume_zone.plugin import NAME, REASON_CONFLICT, VolumeZone, new

__all__ = ["NAME", "REASON_CONFLICT", "VolumeZone", "new"]
