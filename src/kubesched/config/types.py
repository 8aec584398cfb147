"""The validated, defaulted configuration that the rest of kubesched consumes.

`config.load` turns a user's KubeSchedulerConfiguration file into these; the framework builds
one profile per `ProfileConfig` through the plugin registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Extension points, in kube-scheduler's names and in the order a cycle runs them.
EXTENSION_POINTS = (
    "preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
    "reserve", "permit", "preBind", "bind", "postBind",
)


@dataclass(frozen=True)
class PluginRef:
    name: str
    weight: int = 0  # only meaningful at the score extension point


@dataclass(frozen=True)
class ProfileConfig:
    scheduler_name: str
    # extension point name -> enabled plugins in order (defaults merged with the user's enabled/disabled)
    plugins: dict[str, tuple[PluginRef, ...]]
    # plugin name -> its args (the `args` object of pluginConfig, apiVersion/kind stripped), defaults applied
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None  # None: use the top-level value


@dataclass(frozen=True)
class ClientConnection:
    kubeconfig: str = ""
    qps: float = 50.0
    burst: int = 100
    content_type: str = "application/json"


@dataclass(frozen=True)
class LeaderElection:
    # kube-scheduler's defaults; only `leader_elect` is honoured so far (see load.IMPLEMENTED_LEADER_ELECTION)
    leader_elect: bool = True
    lease_duration_seconds: float = 15.0
    renew_deadline_seconds: float = 10.0
    retry_period_seconds: float = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"


@dataclass(frozen=True)
class SchedulerConfig:
    profiles: tuple[ProfileConfig, ...]
    percentage_of_nodes_to_score: int = 0  # 0 = adaptive, as kube-scheduler
    client_connection: ClientConnection = field(default_factory=ClientConnection)
    pod_initial_backoff_seconds: float = 1.0
    pod_max_backoff_seconds: float = 10.0
    leader_election: LeaderElection = field(default_factory=LeaderElection)
    # Fields present in the user's file that kubesched does not implement yet (warned once at start).
    unimplemented: tuple[str, ...] = ()
