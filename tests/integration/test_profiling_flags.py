"""kubesched's profiling paths on its secure port against the reference kube-scheduler's (profiling
on by default in both): the same statuses, the same bodies where kube-scheduler's are text, the same
403 for a caller the cluster does not allow; and none of them with --profiling=false."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest

from kubesched_dev.localcluster.procs import free_port
from tests.integration.conftest import KubeschedProcess
from tests.integration.kube import Kube
from tests.integration.test_secure_serving import _same


def _admin(plane: Kube) -> tuple[Path, Path]:
    pki = Path(plane.cluster.dir) / "pki"
    return pki / "admin.crt", pki / "admin.key"  # O=system:masters: allowed without a review


def _request(port: int, path: str, cert: tuple[Path, Path] | None = None, put: str | None = None) -> tuple[int, str]:
    """(status, body); a profile's bytes decoded with replacements, only their presence matters."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE  # both serve self-signed certificates
    if cert is not None:
        ctx.load_cert_chain(str(cert[0]), str(cert[1]))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}", data=None if put is None else put.encode(),
                                 method="GET" if put is None else "PUT")
    try:
        with opener.open(req, timeout=30) as resp:
            return int(resp.status), resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")




@pytest.fixture(scope="module")
def ports(start_kubesched: Callable[..., KubeschedProcess]) -> tuple[int, int]:
    on, off = free_port(), free_port()
    start_kubesched("--scheduler-name=profiling-on", f"--secure-port={on}", "--bind-address=127.0.0.1",
                    "--leader-elect=false")
    start_kubesched("--scheduler-name=profiling-off", f"--secure-port={off}", "--bind-address=127.0.0.1",
                    "--leader-elect=false", "--profiling=false", "--contention-profiling=false")
    return on, off


def test_profiling_paths_answer_as_kube_schedulers(plane: Kube, ports: tuple[int, int]) -> None:
    on, _ = ports
    reference = plane.cluster.ports["kube-scheduler"]
    admin = _admin(plane)
    for path in ("/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/flags/v"):
        ours, theirs = _request(on, path, cert=admin), _request(reference, path, cert=admin)
        assert ours[0] == theirs[0], (path, ours, theirs)
    assert _request(on, "/debug/flags/v", cert=admin) == (406, "unsupported http method\n")
    _same(_request(on, "/debug/flags/v", cert=admin), _request(reference, "/debug/flags/v", cert=admin))
    ours, theirs = _request(on, "/debug/flags/v", admin, put="x"), _request(reference, "/debug/flags/v", admin, put="x")
    assert ours == theirs == (400, 'strconv.ParseUint: parsing "x": invalid syntax\n')
    # anonymous: the SubjectAccessReview says no, in kube-scheduler's words
    ours, theirs = _request(on, "/debug/pprof/"), _request(reference, "/debug/pprof/")
    assert ours[0] == 403
    _same(ours, theirs)


def test_profiling_off_serves_no_debug_path(plane: Kube, ports: tuple[int, int]) -> None:
    _, off = ports
    admin = _admin(plane)
    for path in ("/debug/pprof/", "/debug/pprof/profile?seconds=1", "/debug/flags/v"):
        assert _request(off, path, cert=admin)[0] == 404, path
    assert _request(off, "/metrics", cert=admin)[0] == 200
