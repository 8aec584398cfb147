"""Everything that talks HTTP to the apiserver: asyncio + aiohttp, raw JSON into msgspec structs."""

from kubesched.api.binder import Binder, BindOutcome, BindResult
from kubesched.api.client import ApiClient, Response
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.api.events import EventRecorder
from kubesched.api.informer import (
    JOBS,
    NODES,
    PODS,
    EventHandler,
    Handlers,
    Informer,
    diff_relist,
    job_informer,
    namespace_informer,
    node_informer,
    pod_informer,
)
from kubesched.api.kubeconfig import ClusterConfig, KubeconfigError, load_config, load_incluster, load_kubeconfig
from kubesched.api.pod_status import ConditionWriter, set_pod_unschedulable
from kubesched.api.tasks import TaskSet, create_guarded_task

__all__ = [
    "JOBS",
    "NODES",
    "PODS",
    "ApiClient",
    "ApiConnectionError",
    "ApiError",
    "BindOutcome",
    "BindResult",
    "Binder",
    "ClusterConfig",
    "ConditionWriter",
    "EventHandler",
    "EventRecorder",
    "Handlers",
    "Informer",
    "KubeconfigError",
    "Response",
    "TaskSet",
    "create_guarded_task",
    "diff_relist",
    "job_informer",
    "load_config",
    "load_incluster",
    "load_kubeconfig",
    "namespace_informer",
    "node_informer",
    "pod_informer",
    "set_pod_unschedulable",
]
