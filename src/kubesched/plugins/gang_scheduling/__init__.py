"""GangScheduling (GenericWorkload): all-or-nothing placement of a PodGroup's gang."""

from kubesched.plugins.gang_scheduling.plugin import NAME, PERMIT_TIMEOUT, GangScheduling, new, placement_feasible

__all__ = ["NAME", "PERMIT_TIMEOUT", "GangScheduling", "new", "placement_feasible"]
