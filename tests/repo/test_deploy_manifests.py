"""deploy/ as a kustomization: the Deployment's arguments are options `kubesched run` has, its config
loads, and its pods run as the issue asks (read from the files, no cluster; the server-side dry run on
the plane is tests/integration/test_deploy_kustomize.py)."""

from __future__ import annotations

import functools
import re
import textwrap
from pathlib import Path, PurePosixPath
from typing import Any

import click
import pytest
import yaml

from kubesched.cmd.run import run
from kubesched.config import load
from tests.paths import REPO as REPO_ROOT
from tests.unit.cmd.kube_scheduler_flags import KUBE_SCHEDULER_FLAGS

DEPLOY = REPO_ROOT / "deploy"


@functools.cache  # parsed once: the tests only read them
def _docs(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((DEPLOY / name).read_text()) if d]


@functools.cache
def _kustomization() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    return doc


def _one(kind: str) -> dict[str, Any]:
    found = [d for f in _kustomization()["resources"] for d in _docs(f) if d["kind"] == kind]
    assert len(found) == 1, f"{kind}: {len(found)} in the kustomization's resources"
    return found[0]


def _pod_spec() -> dict[str, Any]:
    spec: dict[str, Any] = _one("Deployment")["spec"]["template"]["spec"]
    return spec


def _container() -> dict[str, Any]:
    containers = _pod_spec()["containers"]
    assert len(containers) == 1
    container: dict[str, Any] = containers[0]
    return container


def _config_generator() -> tuple[str, str, Path]:
    """(ConfigMap name, key, source file) of the generated config."""
    [gen] = _kustomization()["configMapGenerator"]
    [entry] = gen["files"]
    key, _, source = entry.partition("=")
    return gen["name"], key, DEPLOY / source


def _run_args() -> list[str]:
    args = list(_container()["args"])
    assert args[0] == "run", "the image's ENTRYPOINT is kubesched: args start with the subcommand"
    return args[1:]


def _flag(name: str) -> str:
    values = [a.partition("=")[2] for a in _run_args() if a.partition("=")[0] == name]
    assert len(values) == 1, f"{name} given {len(values)} times"
    return values[0]


def test_every_file_the_kustomization_names_exists() -> None:
    k = _kustomization()
    assert k["kind"] == "Kustomization"
    for name in k["resources"]:
        assert (DEPLOY / name).is_file(), name
    assert _config_generator()[2].is_file()
    kinds = {d["kind"] for f in k["resources"] for d in _docs(f)}
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Deployment",
            "PodDisruptionBudget"} <= kinds
    assert "rbac.yaml" in k["resources"]  # kept a file of its own


def test_the_deployment_args_are_options_of_kubesched_run() -> None:
    # click parses them as `kubesched run` would at start: an unknown option or a bad value raises
    try:
        ctx = run.make_context("run", _run_args())
    except click.UsageError as exc:
        pytest.fail(f"deploy/kubesched.yaml's args are refused by `kubesched run`: {exc.format_message()}")
    assert ctx.params["config_path"] == _flag("--config")


def test_the_deployment_args_are_kube_schedulers_flags() -> None:
    # so the manifest reads as a kube-scheduler one; kubesched's own spellings (--log-format) are not
    names = [a.partition("=")[0] for a in _run_args()]
    assert [n for n in names if n not in KUBE_SCHEDULER_FLAGS] == []


def test_the_config_is_mounted_where_the_args_read_it() -> None:
    name, key, _ = _config_generator()
    config = PurePosixPath(_flag("--config"))
    mounts = {m["name"]: m for m in _container()["volumeMounts"]}
    volumes = {v["name"]: v for v in _pod_spec()["volumes"]}
    [vol] = [v for v in volumes.values() if v.get("configMap", {}).get("name") == name]
    mount = mounts[vol["name"]]
    assert PurePosixPath(mount["mountPath"]) / key == config
    assert mount.get("readOnly") is True


def test_the_config_loads_with_leader_election_on_the_lease_the_role_grants() -> None:
    _, _, source = _config_generator()
    config = load(str(source))
    assert config.unimplemented == ()
    le = config.leader_election
    assert le.leader_elect
    assert (le.lease_duration_seconds, le.renew_deadline_seconds, le.retry_period_seconds) == (15, 10, 2)
    roles = [d for d in _docs("rbac.yaml") if d["kind"] == "Role"]
    [role] = [r for r in roles if r["metadata"]["name"] == "kubesched-leader-election"]
    assert role["metadata"]["namespace"] == le.resource_namespace
    assert any(le.resource_name in rule.get("resourceNames", ()) and {"get", "update"} <= set(rule["verbs"])
               for rule in role["rules"])
    assert [p.scheduler_name for p in config.profiles] == ["kubesched"]


def test_two_replicas_that_avoid_each_others_node() -> None:
    deployment = _one("Deployment")
    assert deployment["spec"]["replicas"] == 2
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    anti = _pod_spec()["affinity"]["podAntiAffinity"]
    terms = [t["podAffinityTerm"] for t in anti.get("preferredDuringSchedulingIgnoredDuringExecution", ())]
    terms += anti.get("requiredDuringSchedulingIgnoredDuringExecution", [])
    assert any(t["topologyKey"] == "kubernetes.io/hostname" and t["labelSelector"]["matchLabels"].items()
               <= labels.items() for t in terms)
    assert "schedulerName" not in _pod_spec()  # placed by the cluster's default scheduler, not itself


def test_service_account_is_the_one_rbac_yaml_binds() -> None:
    [sa] = [d for d in _docs("rbac.yaml") if d["kind"] == "ServiceAccount"]
    deployment = _one("Deployment")
    assert _pod_spec()["serviceAccountName"] == sa["metadata"]["name"]
    assert deployment["metadata"]["namespace"] == sa["metadata"]["namespace"]


def test_runs_locked_down() -> None:
    pod, container = _pod_spec()["securityContext"], _container()["securityContext"]
    merged = {**pod, **container}  # the container's fields win, as the kubelet applies them
    assert merged["runAsNonRoot"] is True
    assert isinstance(merged["runAsUser"], int)
    assert merged["runAsUser"] > 0
    assert container["readOnlyRootFilesystem"] is True
    assert container["allowPrivilegeEscalation"] is False
    assert container["capabilities"]["drop"] == ["ALL"]
    assert "add" not in container["capabilities"]
    assert merged["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not container.get("privileged", False)


def test_image_user_is_the_pods_user() -> None:
    users = re.findall(r"^USER\s+(\d+)", (DEPLOY / "Containerfile").read_text(), flags=re.M)
    assert users, "the Containerfile sets a numeric USER"
    assert int(users[-1]) == _container()["securityContext"]["runAsUser"]


def test_requests_and_limits() -> None:
    resources = _container()["resources"]
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= resources[kind].keys(), kind


@pytest.mark.parametrize(("probe", "path"), [
    pytest.param("livenessProbe", "/livez", id="liveness"),
    pytest.param("readinessProbe", "/readyz", id="readiness"),
    pytest.param("startupProbe", "/livez", id="startup"),
])
def test_probes_are_on_the_secure_port(probe: str, path: str) -> None:
    get = _container()[probe]["httpGet"]
    assert (get["path"], get["port"], get["scheme"]) == (path, 10259, "HTTPS")
    assert {"name": "https", "containerPort": 10259, "protocol": "TCP"} in _container()["ports"]


SECURE_PORT = next((p for p in run.params if p.name == "secure_port"), None)


def test_kubesched_serves_the_probes_port_by_default() -> None:
    # the args leave --secure-port and --bind-address at their defaults: kube-scheduler's 10259 on
    # every address, which the kubelet's probes reach
    assert SECURE_PORT is not None
    assert SECURE_PORT.default == 10259
    assert not any(a.partition("=")[0] in ("--secure-port", "--bind-address") for a in _run_args())
    bind = next(p for p in run.params if p.name == "bind_address")
    assert bind.default in ("0.0.0.0", "::", "")


def test_pdb_keeps_one_replica() -> None:
    pdb = _one("PodDisruptionBudget")
    assert pdb["apiVersion"] == "policy/v1"
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"  # an unready replica never blocks a drain
    labels = _one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["metadata"]["namespace"] == _one("Deployment")["metadata"]["namespace"]


def test_the_deploy_docs_moved_profile_loads_as_kube_scheduler_runs_it(tmp_path: Path) -> None:
    # docs/deploying.md, "Moving a kube-scheduler profile to kubesched"
    doc = (DEPLOY.parent / "docs" / "deploying.md").read_text()
    marker = doc.index("<!-- migrated-profile:")
    block = re.search(r"```yaml\n(.*?)```", doc[marker:], flags=re.S)
    assert block is not None
    profiles = yaml.safe_load(textwrap.dedent(block[1]))
    config_file = tmp_path / "moved.yaml"
    config_file.write_text(yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                           "kind": "KubeSchedulerConfiguration", "profiles": profiles}))
    config = load(str(config_file))
    assert config.unimplemented == ()
    [profile] = config.profiles
    assert profile.scheduler_name == "batch-scheduler"
    every = {ref.name for refs in profile.plugins.values() for ref in refs}
    assert "CronJobPool" not in every
    assert "NodeResourcesBalancedAllocation" not in {ref.name for ref in profile.plugins["score"]}
