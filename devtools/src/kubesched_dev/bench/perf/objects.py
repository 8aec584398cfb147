"""Objects from templates, and where to send them: what scheduler_perf gets from client-go's
RESTMapper and its text/template files."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import yaml

from kubesched.api import ApiClient
from kubesched_dev.bench.perf import gotemplate

_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery util/rand.String's
# libyaml's parser where PyYAML has it: a run renders thousands of objects (claims, slices) and
# the pure-Python one costs milliseconds each.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def from_template(path: str, env: dict[str, Any]) -> dict[str, Any]:
    text = Path(path).read_text()
    obj = yaml.load(gotemplate.render(text, env), Loader=_LOADER)
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: not an object")
    return obj


def from_file(path: str) -> dict[str, Any]:
    obj = yaml.load(Path(path).read_text(), Loader=_LOADER)
    if not isinstance(obj, dict):
        raise ValueError(f"{path}: not an object")
    return obj


def base_pod() -> dict[str, Any]:
    """makeBasePod: generateName pod-, one pause container of 100m / 500Mi with port 80."""
    res = {"cpu": "100m", "memory": "500Mi"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "pod-"},
            "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10.2",
                                     "ports": [{"containerPort": 80}],
                                     "resources": {"limits": dict(res), "requests": dict(res)}}]}}


def base_node(prefix: str) -> dict[str, Any]:
    """makeBaseNode: 110 pods, 4 CPU, 32Gi, Ready."""
    cap = {"pods": "110", "cpu": "4", "memory": "32Gi"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"generateName": prefix},
            "status": {"capacity": dict(cap), "allocatable": dict(cap), "phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def named_node(node: dict[str, Any]) -> dict[str, Any]:
    """As the node preparer: a name chosen up front (so the hostname label can carry it). No kwok
    annotation: as in scheduler_perf, nothing heartbeats the node and no node lifecycle controller
    runs (runner.CONTROLLERS), so it stays as created, Ready, and its pods are never run."""
    meta = node.setdefault("metadata", {})
    name = meta.get("name") or meta.get("generateName", "") + "".join(
        random.choices(_ALPHABET, k=5))
    meta["name"] = name
    meta.pop("generateName", None)
    meta.setdefault("labels", {})["kubernetes.io/hostname"] = name
    return node


def signature(pod: dict[str, Any], index: int, batch: int) -> dict[str, Any]:
    pod.setdefault("metadata", {}).setdefault("labels", {})["signature"] = f"signature-label-{index // batch}"
    return pod


class RestMapper:
    """apiVersion + kind -> (collection path, namespaced), from the apiserver's discovery."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client
        self._cache: dict[str, dict[str, tuple[str, bool]]] = {}

    async def mapping(self, api_version: str, kind: str) -> tuple[str, bool]:
        gv = self._cache.get(api_version)
        if gv is None:
            base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            doc = orjson.loads(await self.client.get(base))
            gv = {r["kind"]: (f"{base}/{r['name']}", bool(r.get("namespaced")))
                  for r in doc.get("resources", []) if "/" not in r["name"]}
            self._cache[api_version] = gv
        if kind not in gv:
            raise ValueError(f"failed mapping {kind!r} in {api_version} to resource")
        return gv[kind]

    async def path(self, obj: dict[str, Any], namespace: str) -> str:
        collection, namespaced = await self.mapping(obj.get("apiVersion", ""), obj.get("kind", ""))
        if namespace and not namespaced:
            raise ValueError(f"namespace {namespace!r} set, but {obj.get('kind')} is cluster-scoped")
        if not namespace and namespaced:
            raise ValueError(f"namespace not set, but {obj.get('kind')} is namespaced")
        if namespace:
            prefix, _, resource = collection.rpartition("/")
            return f"{prefix}/namespaces/{namespace}/{resource}"
        return collection
