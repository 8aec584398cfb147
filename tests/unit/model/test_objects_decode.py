"""The Pod and Node fields NodeDeclaredFeatures reads, decoded from the apiserver's JSON (nulls as
unset, as everywhere in the model)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kubesched.model.decode import TolerantDecoder
from kubesched.model.objects import Node, Pod


def decode_pod(spec: dict[str, Any]) -> Pod:
    return TolerantDecoder(Pod).decode(json.dumps({"metadata": {"name": "p"}, "spec": spec}).encode())


def test_node_declared_features() -> None:
    node = TolerantDecoder(Node).decode(json.dumps({
        "metadata": {"name": "n"},
        "status": {"declaredFeatures": ["RestartAllContainersOnContainerExits", "VolumeBindMountOptions"]},
    }).encode())
    assert node.status.declared_features == ["RestartAllContainersOnContainerExits", "VolumeBindMountOptions"]


@pytest.mark.parametrize("status", [{}, {"declaredFeatures": None}, {"declaredFeatures": []}])
def test_node_without_declared_features(status: dict[str, Any]) -> None:
    node = TolerantDecoder(Node).decode(json.dumps({"metadata": {"name": "n"}, "status": status}).encode())
    assert node.status.declared_features == []


def test_pod_fields() -> None:
    rule = {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}
    mount = {"name": "v", "mountPath": "/v", "bindMountOptions": ["noexec", "nosuid"]}
    pod = decode_pod({
        "hostNetwork": True, "hostUsers": False,
        "containers": [{"name": "c", "restartPolicy": "Never", "restartPolicyRules": [rule],
                        "volumeMounts": [mount]}],
        "initContainers": [{"name": "i", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
        "ephemeralContainers": [{"name": "debug", "targetContainerName": "c", "volumeMounts": [mount]}],
    })
    spec = pod.spec
    assert (spec.host_network, spec.host_users) == (True, False)
    assert [r.action for r in spec.containers[0].restart_policy_rules] == ["RestartAllContainers"]
    assert spec.containers[0].volume_mounts[0].bind_mount_options == ["noexec", "nosuid"]
    assert spec.init_containers[0].volume_mounts[0].bind_mount_options == []
    assert spec.ephemeral_containers[0].volume_mounts[0].bind_mount_options == ["noexec", "nosuid"]


def test_pod_fields_absent_or_null() -> None:
    spec = decode_pod({"hostUsers": None, "containers": [{"name": "c", "restartPolicyRules": None,
                                                         "volumeMounts": None}]}).spec
    assert (spec.host_network, spec.host_users, spec.ephemeral_containers) == (False, None, [])
    assert (spec.containers[0].restart_policy_rules, spec.containers[0].volume_mounts) == ([], [])
