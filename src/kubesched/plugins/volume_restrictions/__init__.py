"""VolumeRestrictions (kube-scheduler volumerestrictions): see plugin.py."""

from kubesched.plugins.volume_restrictions.plugin import (
    NAME,
    REASON_DISK_CONFLICT,
    REASON_READ_WRITE_ONCE_POD_CONFLICT,
    VolumeRestrictions,
    new,
)

__all__ = ["NAME", "REASON_DISK_CONFLICT", "REASON_READ_WRITE_ONCE_POD_CONFLICT", "VolumeRestrictions", "new"]
