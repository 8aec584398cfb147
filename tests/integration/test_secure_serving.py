"""kubesched's secure port against the reference kube-scheduler's on the same plane: the same status
and body for /metrics and /healthz without a token, with a ServiceAccount token that may not read
/metrics, with one whose ClusterRole allows nonResourceURLs /metrics get, with a bad token, and with
the admin client certificate (system:masters, its CA read from extension-apiserver-authentication)."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube, wait_for

Answer = tuple[int, str]


def _get(port: int, path: str, token: str | None = None, cert: tuple[Path, Path] | None = None) -> Answer:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # both serve self-signed certificates; checked in the unit tests
    if cert is not None:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}",
                                 headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with opener.open(req, timeout=10) as resp:
            return int(resp.status), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _sa_token(plane: Kube, ns: str, name: str) -> str:
    plane.create(f"/api/v1/namespaces/{ns}/serviceaccounts",
                 {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    token: str = plane.create(f"/api/v1/namespaces/{ns}/serviceaccounts/{name}/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": 3600}})["status"]["token"]
    return token


def _allow_metrics(plane: Kube, ns: str, sa: str) -> None:
    name = f"{ns}-metrics-reader"
    plane.create("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})
    plane.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]})


def _same(ours: Answer, theirs: Answer) -> None:
    assert ours[0] == theirs[0], f"kubesched answered {ours}, kube-scheduler {theirs}"
    if ours[0] != 200:
        assert ours[1] == theirs[1], f"kubesched's body {ours[1]!r}, kube-scheduler's {theirs[1]!r}"


@pytest.fixture(scope="module")
def secure(start_kubesched: Callable[..., KubeschedProcess]) -> int:
    port = free_port()
    start_kubesched("--scheduler-name=secure-sched", f"--secure-port={port}", "--bind-address=127.0.0.1")
    return port


def test_health_is_open_and_metrics_closed_as_kube_schedulers(plane: Kube, secure: int) -> None:
    reference = plane.cluster.ports["kube-scheduler"]
    for path in ("/healthz", "/livez", "/readyz"):
        ours, theirs = _get(secure, path), _get(reference, path)
        assert ours == (200, "ok"), path
        _same(ours, theirs)
    ours, theirs = _get(secure, "/metrics"), _get(reference, "/metrics")
    assert ours[0] == 403
    assert json.loads(ours[1])["message"] == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
    _same(ours, theirs)
    # a token the apiserver refuses: 401, on /healthz too (authentication comes before the allowed paths)
    for path in ("/metrics", "/healthz"):
        ours, theirs = _get(secure, path, token="not-a-token"), _get(reference, path, token="not-a-token")
        assert ours[0] == 401, path
        _same(ours, theirs)


def test_metrics_need_a_token_that_may_read_them(plane: Kube, secure: int) -> None:
    reference = plane.cluster.ports["kube-scheduler"]
    ns = plane.namespace("secure-serving")
    nobody = _sa_token(plane, ns, "nobody")
    reader = _sa_token(plane, ns, "reader")
    _allow_metrics(plane, ns, "reader")
    ours, theirs = _get(secure, "/metrics", token=nobody), _get(reference, "/metrics", token=nobody)
    assert ours[0] == 403
    assert json.loads(ours[1])["message"] == (
        f'forbidden: User "system:serviceaccount:{ns}:nobody" cannot get path "/metrics"')
    _same(ours, theirs)
    # RBAC reaches the apiserver's authorizer at once; nothing was cached for this user yet.
    ours = wait_for("the reader's 200", lambda: a if (a := _get(secure, "/metrics", token=reader))[0] == 200
                    else None, timeout=15)
    assert "scheduler_schedule_attempts_total" in ours[1]
    _same(ours, _get(reference, "/metrics", token=reader))
    # the healthz endpoints need no right, with a token or without
    _same(_get(secure, "/healthz", token=nobody), _get(reference, "/healthz", token=nobody))


def test_admin_client_certificate_passes(plane: Kube, secure: int) -> None:
    pki = Path(plane.cluster.dir) / "pki"
    admin = (pki / "admin.crt", pki / "admin.key")  # O=system:masters: always allowed, no review
    status, body = _get(secure, "/metrics", cert=admin)
    assert status == 200
    assert "scheduler_pending_pods" in body
    assert _get(plane.cluster.ports["kube-scheduler"], "/metrics", cert=admin)[0] == 200
