"""The node features component-helpers v0.37.2 registers (nodedeclaredfeatures/features/registry.go
AllFeatures), as far as scheduling reads them: a name, whether a pod's spec needs it, and the
version past which every node has it (MaxVersion; none of v0.37.2's has one).

A kubelet publishes in `status.declaredFeatures` those of them it has (their Discover, from its
feature gates and runtime); the apiserver checks a pod update against them (InferForUpdate, e.g.
an in-place resize). Neither concerns a scheduler, so only InferForScheduling is ported: three
features can be needed by a new pod, the other six never.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubesched.model.objects import Container, PodSpec
from kubesched.plugins.node_declared_features.version import Version

RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS = "RestartAllContainersOnContainerExits"
IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING = "InPlacePodLevelResourcesVerticalScaling"
EXTEND_WEB_SOCKETS_TO_KUBELET = "ExtendWebSocketsToKubelet"
IN_PLACE_POD_VERTICAL_SCALING_INIT_CONTAINERS = "InPlacePodVerticalScalingInitContainers"
IN_PLACE_POD_VERTICAL_SCALING_MEMORY_BACKED_VOLUMES = "InPlacePodVerticalScalingMemoryBackedVolumes"
USER_NAMESPACES_HOST_NETWORK_SUPPORT = "UserNamespacesHostNetworkSupport"
DRA_NODE_ALLOCATABLE_RESOURCES = "DRANodeAllocatableResources"
VOLUME_BIND_MOUNT_OPTIONS = "VolumeBindMountOptions"
DRA_OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"

# core/v1 ContainerRestartRuleActionRestartAllContainers
RESTART_ALL_CONTAINERS = "RestartAllContainers"


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    infer_for_scheduling: Callable[[PodSpec], bool]
    max_version: Version | None = None


def _never(spec: PodSpec) -> bool:
    return False


def _restarts_all_containers(spec: PodSpec) -> bool:
    """A container or init container with a restart rule whose action is RestartAllContainers.
    Ephemeral containers have no restart rules."""
    return any(rule.action == RESTART_ALL_CONTAINERS
               for c in (*spec.containers, *spec.init_containers) for rule in c.restart_policy_rules)


def _host_network_in_user_namespace(spec: PodSpec) -> bool:
    return spec.host_network and spec.host_users is not None and not spec.host_users


def _mounts_with_options(containers: list[Container]) -> bool:
    return any(m.bind_mount_options for c in containers for m in c.volume_mounts)


def _bind_mount_options(spec: PodSpec) -> bool:
    return (_mounts_with_options(spec.containers) or _mounts_with_options(spec.init_containers)
            or _mounts_with_options(spec.ephemeral_containers))


# In registry.go's order; the framework sorts them by name.
ALL_FEATURES: tuple[Feature, ...] = (
    Feature(RESTART_ALL_CONTAINERS_ON_CONTAINER_EXITS, _restarts_all_containers),
    # The in-place resize features are needed by a pod update, never by a pod being scheduled.
    Feature(IN_PLACE_POD_LEVEL_RESOURCES_VERTICAL_SCALING, _never),
    Feature(EXTEND_WEB_SOCKETS_TO_KUBELET, _never),
    Feature(IN_PLACE_POD_VERTICAL_SCALING_INIT_CONTAINERS, _never),
    Feature(IN_PLACE_POD_VERTICAL_SCALING_MEMORY_BACKED_VOLUMES, _never),
    Feature(USER_NAMESPACES_HOST_NETWORK_SUPPORT, _host_network_in_user_namespace),
    # DynamicResources checks DRAOptionalNodeOperations itself, against the claim's allocation.
    Feature(DRA_NODE_ALLOCATABLE_RESOURCES, _never),
    Feature(VOLUME_BIND_MOUNT_OPTIONS, _bind_mount_options),
    Feature(DRA_OPTIONAL_NODE_OPERATIONS, _never),
)
