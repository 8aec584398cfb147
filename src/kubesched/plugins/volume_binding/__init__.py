"""VolumeBinding: a pod's PersistentVolumeClaims, bound and to bind, as kube-scheduler decides them."""

from kubesched.plugins.volume_binding.args import parse_args
from kubesched.plugins.volume_binding.plugin import NAME, VolumeBinding, new

__all__ = ["NAME", "VolumeBinding", "new", "parse_args"]
