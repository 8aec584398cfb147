"""component-helpers v0.37.2 nodedeclaredfeatures: the framework's InferForPodScheduling
(framework_test.go TestInferForPodScheduling), the FeatureMapper (featureset_test.go
TestFeatureMapper), each registered feature's InferForScheduling (restartallcontainers,
usernamespaceshostnetwork; volumebindmountoptions has no upstream test), and the registry itself."""

from __future__ import annotations

import pytest

from kubesched.model.objects import PodSpec, ResourceRequirements
from kubesched.plugins.node_declared_features.features import ALL_FEATURES, Feature
from kubesched.plugins.node_declared_features.framework import DEFAULT_FRAMEWORK, Framework
from kubesched.plugins.node_declared_features.version import parse
from tests.builders import PodBuilder, make_pod


def _pod_level_resources(spec: PodSpec) -> bool:
    return spec.resources is not None


WITH_POD_RESOURCES = PodSpec(resources=ResourceRequirements(requests={"cpu": "500m"}))
WITHOUT_POD_RESOURCES = PodSpec()


def _feature(max_version: str | None = None) -> Feature:
    return Feature("PodLevelResources", _pod_level_resources, None if max_version is None else parse(max_version))


@pytest.mark.parametrize(("feature", "spec", "target", "want"), [
    pytest.param(_feature(), WITH_POD_RESOURCES, "1.30.0", {"PodLevelResources"},
                 id="pod-with-feature-inferred-during-scheduling"),
    pytest.param(_feature(), WITHOUT_POD_RESOURCES, "1.30.0", set(), id="pod-without-feature"),
    pytest.param(_feature("1.30.0"), WITH_POD_RESOURCES, "1.31.0", set(),
                 id="feature-universally-available-not-inferred-during-create"),
    pytest.param(_feature("1.30.0"), WITH_POD_RESOURCES, "0.0.0-alpha.2.39+049eafd34dfbd2", {"PodLevelResources"},
                 id="pre-release-target-version"),
    pytest.param(_feature("1.30.0"), WITH_POD_RESOURCES, "1.40.0", set(), id="exceeds-max-version"),
    pytest.param(_feature("1.30.0"), WITH_POD_RESOURCES, "1.30.0", {"PodLevelResources"}, id="at-max-version"),
    pytest.param(_feature("1.38.0"), WITH_POD_RESOURCES, "1.39.0-alpha.2.39+049eafd34dfbd2", set(),
                 id="pre-release-past-max-version"),
])
def test_infer_for_pod_scheduling(feature: Feature, spec: PodSpec, target: str, want: set[str]) -> None:
    assert Framework([feature]).infer_for_pod_scheduling(spec, parse(target)) == want


def test_infer_for_pod_scheduling_target_version_nil() -> None:
    with pytest.raises(ValueError, match="target version cannot be nil"):
        Framework([_feature()]).infer_for_pod_scheduling(WITH_POD_RESOURCES, None)


MAPPER = Framework([Feature(name, lambda spec: False) for name in ("d", "b", "c", "a")])


@pytest.mark.parametrize(("given", "known", "unknown"), [
    pytest.param([], set(), False, id="empty-input"),
    pytest.param(["a"], {"a"}, False, id="single-valid-feature"),
    pytest.param(["a", "c"], {"a", "c"}, False, id="multiple-valid-features"),
    pytest.param(["a", "b", "c", "d"], {"a", "b", "c", "d"}, False, id="all-features"),
    pytest.param(["0", "a"], {"a"}, True, id="unknown-feature-start"),
    pytest.param(["a", "ab", "b"], {"a", "b"}, True, id="unknown-feature-middle"),
    pytest.param(["d", "e"], {"d"}, True, id="unknown-feature-end"),
])
def test_feature_mapper(given: list[str], known: set[str], unknown: bool) -> None:
    assert MAPPER.try_map(given) == known
    if unknown:
        with pytest.raises(ValueError, match="unknown feature"):
            MAPPER.map_sorted(given)
    else:
        assert MAPPER.map_sorted(given) == known


def test_feature_mapper_walks_a_list_as_given() -> None:
    # Out of order (the apiserver refuses such a list): the merge walk skips past "a".
    assert MAPPER.try_map(["c", "a"]) == {"c"}


def _infers(name: str, pod: PodBuilder) -> bool:
    feature = next(f for f in ALL_FEATURES if f.name == name)
    return feature.infer_for_scheduling(pod.obj().spec)


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(make_pod("p").restart_rule(init=True).image("image"), True, id="init-container-with-rules"),
    pytest.param(make_pod("p").restart_rule(), True, id="regular-container-with-rules"),
    pytest.param(make_pod("p").image("image"), False, id="no-rules"),
    pytest.param(make_pod("p").restart_rule("Restart").restart_rule("Restart", init=True), False,
                 id="rules-with-restart-action-only"),
])
def test_restart_all_containers(pod: PodBuilder, want: bool) -> None:
    assert _infers("RestartAllContainersOnContainerExits", pod) is want


@pytest.mark.parametrize(("host_network", "host_users", "want"), [
    pytest.param(True, False, True, id="host-network-true-host-users-false"),
    pytest.param(True, None, False, id="host-network-true-host-users-nil"),
    pytest.param(True, True, False, id="host-network-true-host-users-true"),
    pytest.param(False, False, False, id="host-network-false-host-users-false"),
])
def test_user_namespaces_host_network(host_network: bool, host_users: bool | None, want: bool) -> None:
    pod = make_pod("p").host_network(host_network).host_users(host_users)
    assert _infers("UserNamespacesHostNetworkSupport", pod) is want


@pytest.mark.parametrize(("pod", "want"), [
    pytest.param(make_pod("p"), False, id="no-mounts"),
    pytest.param(make_pod("p").bind_mount_options(), False, id="mount-without-options"),
    pytest.param(make_pod("p").bind_mount_options("noexec"), True, id="container"),
    pytest.param(make_pod("p").bind_mount_options("nodev", kind="init_containers"), True, id="init-container"),
    pytest.param(make_pod("p").bind_mount_options("nosuid", kind="ephemeral_containers"), True,
                 id="ephemeral-container"),
])
def test_volume_bind_mount_options(pod: PodBuilder, want: bool) -> None:
    assert _infers("VolumeBindMountOptions", pod) is want


def test_registry_is_v0_37_2s() -> None:
    assert [f.name for f in ALL_FEATURES] == [
        "RestartAllContainersOnContainerExits", "InPlacePodLevelResourcesVerticalScaling", "ExtendWebSocketsToKubelet",
        "InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScalingMemoryBackedVolumes",
        "UserNamespacesHostNetworkSupport", "DRANodeAllocatableResources", "VolumeBindMountOptions",
        "DRAOptionalNodeOperations"]
    assert all(f.max_version is None for f in ALL_FEATURES)
    assert list(DEFAULT_FRAMEWORK.registered) == sorted(f.name for f in ALL_FEATURES)


def test_only_three_features_are_ever_needed_to_schedule() -> None:
    everything = (make_pod("p").restart_rule().restart_rule(init=True).host_network().host_users(False)
                  .bind_mount_options("noexec").pod_requests(cpu="1").volume("mem").obj().spec)
    assert DEFAULT_FRAMEWORK.infer_for_pod_scheduling(everything, parse("1.37.2")) == {
        "RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport", "VolumeBindMountOptions"}
