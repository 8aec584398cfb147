"""Kubeconfig and in-cluster loading, with generated files and certificates."""

from __future__ import annotations

import base64
import datetime as dt
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubesched.api.kubeconfig import KubeconfigError, load_config, load_incluster, load_kubeconfig


def _cert(cn: str, issuer_key: Any = None, issuer: x509.Name | None = None) -> tuple[bytes, bytes, Any, x509.Name]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer or name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    cert = builder.sign(issuer_key or key, hashes.SHA256())
    pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, key_pem, key, name


@pytest.fixture(scope="module")
def pki() -> dict[str, bytes]:
    ca, _, ca_key, ca_name = _cert("test-ca")
    crt, key, _, _ = _cert("admin", ca_key, ca_name)
    return {"ca": ca, "crt": crt, "key": key}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write_config(tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any] | None = None,
                 name: str = "config", current: str = "ctx") -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:6443"}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def ca_subjects(ctx: ssl.SSLContext) -> list[str]:
    names = []
    certs: list[Any] = ctx.get_ca_certs()
    for cert in certs:
        for rdn in cert["subject"]:
            names += [value for key, value in rdn if key == "commonName"]
    return names


async def test_client_cert_data_and_ca_only_from_kubeconfig(
    tmp_path: Path, pki: dict[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The environment's CA bundle must never replace the cluster's.
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/ca-certificates.crt")
    path = write_config(
        tmp_path,
        {"client-certificate-data": b64(pki["crt"]), "client-key-data": b64(pki["key"])},
        {"server": "https://127.0.0.1:6443/", "certificate-authority-data": b64(pki["ca"])},
    )
    cfg = load_kubeconfig(str(path))
    assert cfg.server == "https://127.0.0.1:6443"
    assert cfg.namespace == "team"
    assert cfg.ssl_context is not None
    assert ca_subjects(cfg.ssl_context) == ["test-ca"]
    assert cfg.ssl_context.verify_mode == ssl.CERT_REQUIRED
    assert await cfg.credentials.authorization() is None


def test_relative_file_paths_resolve_against_the_kubeconfig(tmp_path: Path, pki: dict[str, bytes]) -> None:
    (tmp_path / "pki").mkdir()
    for name in ("ca", "crt", "key"):
        (tmp_path / "pki" / name).write_bytes(pki[name])
    path = write_config(
        tmp_path,
        {"client-certificate": "pki/crt", "client-key": "pki/key"},
        {"server": "https://h:1", "certificate-authority": "pki/ca"},
    )
    cfg = load_kubeconfig(str(path))
    assert cfg.ssl_context is not None
    assert ca_subjects(cfg.ssl_context) == ["test-ca"]


async def test_token_and_insecure(tmp_path: Path) -> None:
    path = write_config(tmp_path, {"token": "abc"}, {"server": "https://h:1", "insecure-skip-tls-verify": True})
    cfg = load_kubeconfig(str(path))
    assert cfg.ssl_context is not None
    assert cfg.ssl_context.verify_mode == ssl.CERT_NONE
    assert await cfg.credentials.authorization() == "Bearer abc"


async def test_token_file_is_reread_after_invalidate(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("one\n")
    cfg = load_kubeconfig(str(write_config(tmp_path, {"tokenFile": "tok"})))
    assert await cfg.credentials.authorization() == "Bearer one"
    (tmp_path / "tok").write_text("two")
    assert await cfg.credentials.authorization() == "Bearer one"
    cfg.credentials.invalidate()
    assert await cfg.credentials.authorization() == "Bearer two"


async def test_exec_plugin(tmp_path: Path) -> None:
    script = tmp_path / "plugin.py"
    script.write_text(
        "import json, os\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "assert info['kind'] == 'ExecCredential'\n"
        "print(json.dumps({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',\n"
        "  'status': {'token': 'exec-' + os.environ['GREETING'],\n"
        "             'expirationTimestamp': '2999-01-01T00:00:00Z'}}))\n"
    )
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": [str(script)], "env": [{"name": "GREETING", "value": "hi"}]}}
    cfg = load_kubeconfig(str(write_config(tmp_path, user)))
    assert await cfg.credentials.authorization() == "Bearer exec-hi"


async def test_exec_plugin_failure_is_clear(tmp_path: Path) -> None:
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                     "args": ["-c", "import sys; sys.stderr.write('no login'); sys.exit(3)"]}}
    cfg = load_kubeconfig(str(write_config(tmp_path, user)))
    with pytest.raises(KubeconfigError, match="exited with 3: no login"):
        await cfg.credentials.authorization()


@pytest.mark.parametrize(
    ("user", "cluster", "context", "message"),
    [
        pytest.param({}, None, "nope", r"context 'nope' not found; valid contexts: ctx", id="unknown-context"),
        pytest.param({}, {"server": "127.0.0.1:6443"}, None, r"clusters\['c'\]\.server must be an http", id="server"),
        pytest.param({"client-certificate-data": "!!!"}, None, None, r"client-certificate-data: not valid base64",
                     id="base64"),
        pytest.param({"client-certificate-data": b64(b"x")}, None, None, r"must be given together", id="cert-no-key"),
        pytest.param({}, {"server": "https://h", "insecure-skip-tls-verify": True,
                          "certificate-authority-data": b64(b"x")}, None, "mutually exclusive", id="insecure-and-ca"),
        pytest.param({"exec": {"command": "x", "apiVersion": "v0"}}, None, None,
                     r"exec\.apiVersion is 'v0'; valid: client\.authentication\.k8s\.io/v1", id="exec-version"),
        pytest.param({"username": "a"}, None, None, r"users\['u'\]\.username is not supported", id="basic-auth"),
        pytest.param({"client-certificate": "missing.crt", "client-key": "k"}, None, None,
                     r"client-certificate: cannot read .*missing\.crt", id="missing-file"),
    ],
)
def test_bad_kubeconfig_names_file_and_field(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any] | None, context: str | None, message: str
) -> None:
    path = write_config(tmp_path, user, cluster)
    with pytest.raises(KubeconfigError, match=message) as err:
        load_kubeconfig(str(path), context)
    assert str(path) in str(err.value)


def test_missing_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(KubeconfigError, match=r"cannot read kubeconfig .*nothing"):
        load_kubeconfig(str(tmp_path / "nothing"))
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n")
    with pytest.raises(KubeconfigError, match="not valid YAML"):
        load_kubeconfig(str(bad))


def test_kubeconfig_env_merges_first_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write_config(tmp_path, {"token": "first"}, name="a")
    b = write_config(tmp_path, {"token": "second"}, {"server": "https://other:1"}, name="b", current="")
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{a}:{b}")
    cfg = load_config()
    assert cfg.server == "https://127.0.0.1:6443"


async def test_in_cluster(tmp_path: Path, pki: dict[str, bytes]) -> None:
    (tmp_path / "token").write_text("sa-token")
    (tmp_path / "ca.crt").write_bytes(pki["ca"])
    (tmp_path / "namespace").write_text("kube-system")
    cfg = load_incluster(tmp_path, {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"})
    assert cfg.server == "https://[fd00::1]:443"
    assert cfg.namespace == "kube-system"
    assert await cfg.credentials.authorization() == "Bearer sa-token"
    with pytest.raises(KubeconfigError, match="KUBERNETES_SERVICE_HOST"):
        load_incluster(tmp_path, {})
