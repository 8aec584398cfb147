"""`kubesched simulate -f` bounds what a manifest can make it do: YAML aliases are expanded only as
far as sigs.k8s.io/yaml's decoder expands them (a few bytes must not become millions of nodes), and
replicas, parallelism and completions only up to a bound, each refusal naming the file or field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from kubesched.cmd.simulate import read_manifests
from kubesched.tools.simulate.documents import alias_expansion_ok
from kubesched.tools.simulate.expand import MAX_COUNT, MAX_PODS, Expander, ExpandError


def laughs(levels: int) -> str:
    """A Deployment whose labels hold `levels` levels of aliases, each ten of the one before."""
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, levels + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + f"\nkind: ConfigMap\nexpanded: *a{levels}\n"


def test_an_alias_bomb_is_refused_naming_the_file_and_the_bound(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(6))
    assert bomb.stat().st_size < 600
    with pytest.raises(click.ClickException) as err:
        read_manifests((str(bomb),))
    message = err.value.message
    assert str(bomb) in message
    assert "document 1" in message
    assert "aliases" in message
    assert "99%" in message


def test_a_document_nested_too_deeply_is_refused_not_a_traceback(tmp_path: Path) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("kind: Pod\nx: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(click.ClickException, match=r"deep\.yaml: document 1: nested too deeply"):
        read_manifests((str(deep),))


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.write_text("kind: Pod\nmetadata: &m\n  self: *m\n")
    with pytest.raises(click.ClickException, match=r"loop\.yaml: document 1: .*contains itself"):
        read_manifests((str(loop),))


def test_ordinary_aliases_still_load(tmp_path: Path) -> None:
    """Anchors shared by a few workloads (a resources block, labels) are what aliases are for."""
    ok = tmp_path / "ok.yaml"
    ok.write_text(
        "kind: List\nitems:\n"
        "- kind: Pod\n  metadata: {name: a, labels: &l {app: web}}\n"
        "  spec: {containers: [{name: c, image: x, resources: &r {requests: {cpu: '1'}}}]}\n"
        "- kind: Pod\n  metadata: {name: b, labels: *l}\n  spec: {containers: [{name: c, image: x, resources: *r}]}\n")
    [doc] = read_manifests((str(ok),))
    assert [d["metadata"]["labels"] for d in doc["items"]] == [{"app": "web"}, {"app": "web"}]
    assert len(Expander().expand([doc]).pods) == 2


@pytest.mark.parametrize(("decodes", "aliases", "ok"), [
    pytest.param(1000, 999, True, id="small-documents-are-never-refused"),
    pytest.param(400_000, 396_000, True, id="99-percent-up-to-400k"),
    pytest.param(400_000, 396_001, False, id="over-99-percent-at-400k"),
    pytest.param(4_000_000, 400_000, True, id="10-percent-from-4M"),
    pytest.param(4_000_000, 400_001, False, id="over-10-percent-at-4M"),
])
def test_the_alias_ratio_is_sigs_k8s_io_yamls(decodes: int, aliases: int, ok: bool) -> None:
    assert alias_expansion_ok(decodes, aliases) is ok


def job(**spec: Any) -> dict[str, Any]:
    return {"kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}, **spec}}


def deployment(replicas: Any) -> dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}}


@pytest.mark.parametrize(("manifest", "field"), [
    pytest.param(deployment(2**31 - 1), "spec.replicas", id="replicas"),
    pytest.param(job(parallelism=MAX_COUNT + 1), "spec.parallelism", id="parallelism"),
    pytest.param(job(parallelism=1, completions=10**12), "spec.completions", id="completions"),
])
def test_a_count_past_the_bound_is_refused_naming_the_field(manifest: dict[str, Any], field: str) -> None:
    with pytest.raises(ExpandError) as err:
        Expander().expand([manifest])
    message = str(err.value)
    assert f"{field} must be a whole number >= 0 and at most {MAX_COUNT}" in message
    assert "document 1" in message


def test_the_bound_itself_is_accepted() -> None:
    assert MAX_COUNT == 100_000  # as Kubernetes bounds an Indexed Job's completions and parallelism
    counted = job(parallelism=MAX_COUNT, completions=MAX_COUNT, suspend=True)  # suspended: no pods made
    assert Expander().expand([counted]).pods == []


def test_many_workloads_together_are_bounded_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each under the bound, together over it: refused before its pods are made, naming the
    workload and the field that crossed it."""
    from kubesched.tools.simulate import expand

    monkeypatch.setattr(expand, "MAX_PODS", 10)
    many = [deployment(4) | {"metadata": {"name": f"d{i}"}} for i in range(3)]
    with pytest.raises(ExpandError, match=r"document 3 \(Deployment default/d2\): spec.replicas: .*more than 10 pods"):
        Expander().expand(many)
    assert MAX_PODS >= MAX_COUNT
