"""The validated, defaulted configuration that the rest of kubesched consumes.

`config.load` turns a user's KubeSchedulerConfiguration file into these; the framework builds
one profile per `ProfileConfig` through the plugin registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# What a profile is built from, and an extender's settings, live with the framework that uses them;
# re-exported here.
from kubesched.framework.extender import ExtenderConfig, ExtenderManagedResource, ExtenderTLSConfig
from kubesched.framework.profile_config import EXTENSION_POINTS, PluginRef, ProfileConfig

__all__ = [
    "EXTENSION_POINTS",
    "ClientConnection",
    "ExtenderConfig",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "LeaderElection",
    "PluginRef",
    "ProfileConfig",
    "SchedulerConfig",
]

@dataclass(frozen=True)
class ClientConnection:
    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    # kube-scheduler's default: the binding and the event go as Kubernetes protobuf; reads stay JSON.
    content_type: str = "application/vnd.kubernetes.protobuf"


@dataclass(frozen=True)
class LeaderElection:
    # kube-scheduler's defaults, except the lock's name: kubesched must never contend for kube-scheduler's
    # own lease when it runs beside it.
    leader_elect: bool = True
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kubesched"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...]
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive, as kube-scheduler
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    # /debug/pprof/ and /debug/flags/v on the serving ports; kubesched has no block profile, so
    # the second changes nothing (see docs/running.md).
    enable_profiling: bool = True
    enable_contention_profiling: bool = True
    # In the file's order; kubesched.framework.extender.ordered puts the ignorable ones last.
    extenders: tuple[ExtenderConfig, ...] = ()
    # Fields present in the user's file that kubesched does not implement yet (warned once at start).
    unimplemented: tuple[str, ...] = ()
