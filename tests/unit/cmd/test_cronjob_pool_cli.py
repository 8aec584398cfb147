"""`kubesched pool taint|untaint`: idempotent, dry-run, other taints kept whole, conflicts retried."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from kubesched.api.errors import ApiError
from kubesched.cmd.pool import apply_pools, pool, pools_from_config, with_taint, without_taint
from kubesched.model.objects import Taint
from tests.paths import REPO as REPO_ROOT

REPO = REPO_ROOT
POOL_TAINT = {"key": "kubesched.io/pool", "value": "cronjob", "effect": "NoSchedule"}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-01-01T00:00:00Z"}


class FakeApi:
    """Nodes in memory; list honours an equality labelSelector; patch checks resourceVersion."""

    def __init__(self, nodes: list[dict[str, Any]], conflicts: int = 0) -> None:
        self.nodes = {n["metadata"]["name"]: n for n in nodes}
        self.patches: list[tuple[str, Any]] = []
        self.conflicts = conflicts

    async def get(self, path: str, params: Any = None) -> bytes:
        if path == "/api/v1/nodes":
            selector = (params or {}).get("labelSelector", "")
            want = dict(kv.split("=") for kv in selector.split(",") if kv)
            items = [n for n in self.nodes.values()
                     if all(n["metadata"].get("labels", {}).get(k) == v for k, v in want.items())]
            return orjson.dumps({"items": items})
        return orjson.dumps(self.nodes[path.rsplit("/", 1)[1]])

    async def patch(self, path: str, body: Any, content_type: str = "") -> bytes:
        name = path.rsplit("/", 1)[1]
        node = self.nodes[name]
        if self.conflicts:
            self.conflicts -= 1
            node["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 1)
            raise ApiError(409, "Conflict", "the object has been modified")
        assert body["metadata"]["resourceVersion"] == node["metadata"]["resourceVersion"]
        self.patches.append((name, copy.deepcopy(body)))
        node.setdefault("spec", {})["taints"] = body["spec"]["taints"]
        node["metadata"]["resourceVersion"] = str(int(node["metadata"]["resourceVersion"]) + 1)
        return orjson.dumps(node)


def node(name: str, labels: dict[str, str], taints: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels, "resourceVersion": "1"},
            "spec": {"taints": taints} if taints else {}}


def cluster() -> list[dict[str, Any]]:
    return [node("pool-1", {"kubesched.io/pool": "cronjob"}, [UNREACHABLE]),
            node("pool-2", {"kubesched.io/pool": "cronjob"}, [POOL_TAINT]),
            node("general", {}),
            node("left-the-pool", {}, [POOL_TAINT])]


def apply(api: FakeApi, remove: bool, dry_run: bool = False) -> tuple[int, list[str]]:
    out: list[str] = []
    pools = pools_from_config(None)
    changed = asyncio.run(apply_pools(api, pools, remove=remove, dry_run=dry_run, echo=out.append))  # type: ignore[arg-type]
    return changed, out


def test_with_and_without_taint() -> None:
    assert with_taint([POOL_TAINT], POOL_TAINT) is None
    assert with_taint([UNREACHABLE], POOL_TAINT) == [UNREACHABLE, POOL_TAINT]
    assert without_taint([UNREACHABLE], POOL_TAINT) is None
    assert without_taint([UNREACHABLE, POOL_TAINT], POOL_TAINT) == [UNREACHABLE]
    other_value = {**POOL_TAINT, "value": "gpu"}
    assert without_taint([other_value], POOL_TAINT) is None


def test_taint_is_idempotent_and_keeps_other_taints_whole() -> None:
    api = FakeApi(cluster())
    changed, out = apply(api, remove=False)
    assert changed == 1
    patch = {"metadata": {"resourceVersion": "1"}, "spec": {"taints": [UNREACHABLE, POOL_TAINT]}}
    assert api.patches == [("pool-1", patch)]
    assert out == ["node/pool-1 tainted (kubesched.io/pool=cronjob:NoSchedule)",
                   "node/pool-2 unchanged (kubesched.io/pool=cronjob:NoSchedule)"]
    assert apply(api, remove=False)[0] == 0


def test_dry_run_changes_nothing() -> None:
    api = FakeApi(cluster())
    changed, out = apply(api, remove=False, dry_run=True)
    assert changed == 1
    assert not api.patches
    assert out[0] == "node/pool-1 tainted (kubesched.io/pool=cronjob:NoSchedule) (dry run)"


def test_untaint_removes_it_wherever_it_is() -> None:
    api = FakeApi(cluster())
    changed, _ = apply(api, remove=True)
    assert changed == 2
    assert sorted(name for name, _ in api.patches) == ["left-the-pool", "pool-2"]
    assert api.nodes["pool-1"]["spec"]["taints"] == [UNREACHABLE]
    assert apply(api, remove=True)[0] == 0


def test_conflict_is_retried_with_a_fresh_read() -> None:
    api = FakeApi(cluster(), conflicts=2)
    changed, _ = apply(api, remove=False)
    assert changed == 1
    assert api.nodes["pool-1"]["spec"]["taints"] == [UNREACHABLE, POOL_TAINT]


def test_pools_from_the_seed_config_have_no_taint() -> None:
    (spec,) = pools_from_config(str(REPO / "devtools/examples/config/seed.yaml"))
    assert spec.taint is None
    api = FakeApi(cluster())
    out: list[str] = []
    assert asyncio.run(apply_pools(api, [spec], remove=False, dry_run=False, echo=out.append)) == 0  # type: ignore[arg-type]
    assert out == ["pool cronjob: no taint configured (taint: null), nothing to do"]


def test_default_pool_taint() -> None:
    (spec,) = pools_from_config(None)
    assert spec.taint == Taint(key="kubesched.io/pool", value="cronjob", effect="NoSchedule")


@pytest.mark.parametrize(("argv", "error"), [
    (["taint", "--pool", "gpu"], "no pool named gpu; pools: cronjob"),
    (["taint", "--config", "missing.yaml"], "missing.yaml: cannot read the config file"),
])
def test_cli_errors(argv: list[str], error: str) -> None:
    result = CliRunner().invoke(pool, argv)
    assert result.exit_code == 1
    assert error in result.output


def test_config_without_the_plugin(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
                    "  - plugins:\n      multiPoint:\n        disabled:\n          - name: CronJobPool\n")
    # The config is checked before any cluster access: a kubeconfig that does not exist is never read.
    result = CliRunner().invoke(pool, ["untaint", "--config", str(path),
                                       "--kubeconfig", str(tmp_path / "no-such-kubeconfig")])
    assert result.exit_code == 1
    assert "no profile enables CronJobPool" in result.output
