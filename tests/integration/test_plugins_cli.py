"""Out-of-tree plugins on the real plane: the example package loaded with --plugin decides placement
and names its reason in FailedScheduling; an out-of-tree binder is the one that binds; a plugin
written fresh here, with kubesched.framework's exported names only, filters too."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for
from tests.integration.sched_helpers import create_pod, delete_pod_now, pod_manifest, wait_bound, wait_event

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "plugins"
NORMAL = {"kind-worker", "kind-worker2"}  # the seed's tier=normal workers
FRESH = f"fresh_plugin_{os.getpid()}"
FRESH_MODULE = '''
from kubesched.framework import Code, CycleState, NodeInfo, PodInfo, Status

class OnlyNode:
    name = "OnlyNode"

    def __init__(self, node: str) -> None:
        self.node = node

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if node.name == self.node:
            return None
        return Status(Code.UNSCHEDULABLE, "node(s) were not " + self.node)

def new(args) -> OnlyNode:
    return OnlyNode(args["node"])
'''


def _profile(name: str, plugins: str, config: str) -> str:
    return (f"  - schedulerName: {name}\n    plugins:\n"
            + textwrap.indent(textwrap.dedent(plugins).strip("\n"), " " * 6) + "\n    pluginConfig:\n"
            + textwrap.indent(textwrap.dedent(config).strip("\n"), " " * 6) + "\n")


CONFIG = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n" + "".join([
    _profile("plugins-allow", "multiPoint:\n  enabled: [{name: NodeLabelAllowlist}]",
             "- name: NodeLabelAllowlist\n  args: {key: tier, values: [normal]}"),
    _profile("plugins-none", "multiPoint:\n  enabled: [{name: NodeLabelAllowlist}]",
             "- name: NodeLabelAllowlist\n  args: {key: tier, values: [gpu]}"),
    _profile("plugins-bind", "bind:\n  disabled: [{name: DefaultBinder}]\n  enabled: [{name: RecordingBinder}]",
             "- name: PreferNodeLabel\n  args: {key: tier, value: normal}"),
    _profile("plugins-fresh", "filter:\n  enabled: [{name: OnlyNode}]",
             "- name: OnlyNode\n  args: {node: kind-worker2}"),
])
FLAGS = ["--plugin=NodeLabelAllowlist=kubesched_example_plugins.allowlist:SPEC",
         "--plugin=PreferNodeLabel=kubesched_example_plugins.prefer_label:new",
         "--plugin=RecordingBinder=kubesched_example_plugins.recording_binder:new",
         f"--plugin=OnlyNode={FRESH}:new"]


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("plugins")
    (d / f"{FRESH}.py").write_text(FRESH_MODULE)
    (d / "sched.yaml").write_text(CONFIG)
    return d


def _env(plugin_dir: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(EXAMPLES), str(plugin_dir)])}


@pytest.fixture(scope="module")
def sched(plugin_dir: Path, start_kubesched: Callable[..., KubeschedProcess]) -> KubeschedProcess:
    return start_kubesched(f"--config={plugin_dir / 'sched.yaml'}", *FLAGS, env=_env(plugin_dir))


@pytest.fixture
def pods(plane: Kube) -> Iterator[tuple[str, list[str]]]:
    """A namespace for one test and the pods it made, deleted after it."""
    ns = plane.namespace(f"plugins-{os.getpid()}-{next(_counter)}")
    made: list[str] = []
    yield ns, made
    for name in made:
        delete_pod_now(plane, ns, name)


_counter = iter(range(10**6))


def _create(plane: Kube, pods: tuple[str, list[str]], name: str, scheduler: str) -> str:
    ns, made = pods
    create_pod(plane, ns, pod_manifest(name, scheduler))
    made.append(name)
    return ns


def test_the_example_allowlist_decides_placement(plane: Kube, sched: KubeschedProcess,
                                                 pods: tuple[str, list[str]]) -> None:
    ns = _create(plane, pods, "allowed", "plugins-allow")
    assert wait_bound(plane, ns, "allowed") in NORMAL


def test_the_example_allowlist_names_its_reason(plane: Kube, sched: KubeschedProcess,
                                                pods: tuple[str, list[str]]) -> None:
    ns = _create(plane, pods, "nowhere", "plugins-none")
    event = wait_event(plane, ns, "nowhere", "FailedScheduling")
    assert "node(s) lacked an allowed tier label (gpu)" in event["note"], event


def test_the_out_of_tree_binder_binds(plane: Kube, sched: KubeschedProcess, pods: tuple[str, list[str]]) -> None:
    ns = _create(plane, pods, "bound-by-plugin", "plugins-bind")
    node = wait_bound(plane, ns, "bound-by-plugin")
    wait_for("RecordingBinder's log line", lambda: any(
        "RecordingBinder bound the pod" in line and f"{ns}/bound-by-plugin" in line and node in line
        for line in sched.log().splitlines()))


def test_a_plugin_written_fresh_filters(plane: Kube, sched: KubeschedProcess, pods: tuple[str, list[str]]) -> None:
    ns = _create(plane, pods, "fresh", "plugins-fresh")
    assert wait_bound(plane, ns, "fresh") == "kind-worker2"


def test_args_the_plugin_rejects_stop_kubesched_with_one_line(plane: Kube, plugin_dir: Path) -> None:
    config = plugin_dir / "bad-args.yaml"
    config.write_text(CONFIG.replace("{node: kind-worker2}", "{nod: kind-worker2}"))
    proc = subprocess.run([sys.executable, "-m", "kubesched", "run", f"--kubeconfig={plane.kubeconfig}",
                           f"--config={config}", *FLAGS], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **_env(plugin_dir)})
    assert proc.returncode == 1, proc.stderr
    want = "profile 'plugins-fresh': plugin OnlyNode rejected its args: no 'node' in {'nod': 'kind-worker2'}"
    assert want in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
