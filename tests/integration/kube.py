"""A small synchronous admin client for integration tests: JSON over the plane's own TLS."""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from kubesched_dev.localcluster import build
from kubesched_dev.localcluster.plane import Cluster

T = TypeVar("T")


class Kube:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.server = cluster.server
        self.kubeconfig = cluster.kubeconfig
        pki = Path(cluster.dir) / "pki"
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                                   urllib.request.HTTPSHandler(context=ctx))

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json") -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data, method=method,
                                     headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with self._opener.open(req, timeout=30) as resp:
                return int(resp.status), json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                return exc.code, json.loads(raw)
            except ValueError:
                return exc.code, raw.decode(errors="replace")

    def get(self, path: str) -> Any:
        status, body = self.request("GET", path)
        assert status == 200, f"GET {path}: {status} {body}"
        return body

    def create(self, path: str, obj: dict[str, Any]) -> Any:
        status, body = self.request("POST", path, obj)
        assert status in (200, 201), f"POST {path}: {status} {body}"
        return body

    def delete(self, path: str) -> None:
        status, body = self.request("DELETE", path)
        assert status in (200, 202, 404), f"DELETE {path}: {status} {body}"

    def pods(self, namespace: str, selector: str = "") -> list[dict[str, Any]]:
        q = f"?labelSelector={selector}" if selector else ""
        items: list[dict[str, Any]] = self.get(f"/api/v1/namespaces/{namespace}/pods{q}")["items"]
        return items

    def watch(self, path: str, timeout: float = 120) -> Any:
        """A streaming GET (…?watch=1): the open response, one JSON watch event a line."""
        req = urllib.request.Request(self.server + path, headers={"Accept": "application/json"})
        return self._opener.open(req, timeout=timeout)

    def kubectl(self, *args: str, input: str | None = None, check: bool = True) -> str:
        proc = subprocess.run([str(build.bin_dir() / "kubectl"), f"--kubeconfig={self.kubeconfig}", *args],
                              input=input, capture_output=True, text=True, timeout=120)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout + proc.stderr if not check else proc.stdout

    def service_account_kubeconfig(self, namespace: str, name: str, path: Path) -> Path:
        """A kubeconfig at `path` that authenticates as the service account, by a fresh token."""
        token = self.create(f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                             "spec": {"expirationSeconds": 3600}})["status"]["token"]
        ca = (Path(self.cluster.dir) / "pki" / "ca.crt").read_bytes()
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "sa",
            "clusters": [{"name": "c", "cluster": {"server": self.server,
                                                   "certificate-authority-data": base64.b64encode(ca).decode()}}],
            "users": [{"name": name, "user": {"token": token}}],
            "contexts": [{"name": "sa", "context": {"cluster": "c", "user": name}}],
        }))
        return path

    def namespace(self, name: str) -> str:
        self.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return name


def wait_for(what: str, fn: Callable[[], T | None], timeout: float = 30.0, interval: float = 0.25) -> T:
    """Poll until fn returns something truthy; fail with `what` and the last value seen."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; last seen: {last!r}")
