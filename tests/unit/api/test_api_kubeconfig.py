"""Kubeconfig and in-cluster loading, with generated files and certificates."""

from __future__ import annotations

import base64
import datetime as dt
import ssl
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from kubesched.api.kubeconfig import (
    Credentials,
    ExecConfig,
    KubeconfigError,
    load_config,
    load_incluster,
    load_kubeconfig,
)
from kubesched.backend.queue.clock import FakeClock


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
        pytest.param({}, None, "nope", r'--context "nope" is not among contexts: ctx', id="unknown-context"),
        pytest.param({}, {"server": "127.0.0.1:6443"}, None, r"clusters\[0\]\.cluster\.server: must be an http",
                     id="server"),
        pytest.param({"client-certificate-data": "!!!"}, None, None, r"client-certificate-data: not valid base64",
                     id="base64"),
        pytest.param({"client-certificate-data": b64(b"x")}, None, None, r"must be given together", id="cert-no-key"),
        pytest.param({}, {"server": "https://h", "insecure-skip-tls-verify": True,
                          "certificate-authority-data": b64(b"x")}, None, "mutually exclusive", id="insecure-and-ca"),
        pytest.param({"exec": {"command": "x", "apiVersion": "v0"}}, None, None,
                     r'users\[0\]\.user\.exec\.apiVersion: is "v0"; valid: client\.authentication\.k8s\.io/v1',
                     id="exec-version"),
        pytest.param({"username": "a"}, None, None, r"users\[0\]\.user\.username: not supported", id="basic-auth"),
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


def kubeconfig_text(*, cluster: str = "server: https://h:1", user: str = "token: t",
                    clusters: str | None = None, users: str | None = None, current: str = "ctx") -> str:
    """A kubeconfig as text, so a row can break it the way a hand-edited file breaks."""
    clusters = clusters if clusters is not None else f"- name: c\n  cluster:\n    {cluster}\n"
    users = users if users is not None else f"- name: u\n  user:\n    {user}\n"
    return (
        f"apiVersion: v1\nkind: Config\ncurrent-context: {current}\n"
        f"clusters:\n{clusters}users:\n{users}"
        "contexts:\n- name: ctx\n  context: {cluster: c, user: u}\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param(kubeconfig_text(cluster='server: https://h:1\n    insecure-skip-tls-verify: "false"'),
                     r'clusters\[0\]\.cluster\.insecure-skip-tls-verify: expected a boolean \(true or false, '
                     r'unquoted\), got a string', id="quoted-bool"),
        pytest.param(kubeconfig_text(user="token: caf\xe9").encode("latin-1"),
                     r"not UTF-8 text: byte 0xe9 at line 11", id="not-utf8"),
        pytest.param("- clusters\n- users\n", r"the top level: expected a mapping .*, got a list", id="not-a-mapping"),
        pytest.param(kubeconfig_text(clusters="  name: c\n  cluster: {server: https://h:1}\n"),
                     r"clusters: expected a list of \{name, cluster\} entries, got a mapping", id="clusters-not-list"),
        pytest.param(kubeconfig_text(clusters="- name: c\n"),
                     r"clusters\[0\]\.cluster: required", id="cluster-entry-without-cluster"),
        pytest.param(kubeconfig_text(cluster="server: https://h:1\n    certificate-authority-data: not*base64"),
                     r"clusters\[0\]\.cluster\.certificate-authority-data: not valid base64", id="ca-not-base64"),
        pytest.param(kubeconfig_text(cluster="server: [https://a:1, https://b:1]"),
                     r"clusters\[0\]\.cluster\.server: expected a string, got a list", id="list-for-string"),
        pytest.param(kubeconfig_text(current="nope"),
                     r'current-context: "nope" is not among contexts: ctx', id="current-context-target-missing"),
        pytest.param(kubeconfig_text(users="- null\n"), r"users\[0\]: expected a mapping .*, got null",
                     id="users-entry-null"),
        pytest.param("", r"the file is empty", id="empty-file"),
        pytest.param(kubeconfig_text(user="token: 12345"),
                     r'users\[0\]\.user\.token: expected a string, got a number \(quote it\)',
                     id="number-for-string"),
        pytest.param(kubeconfig_text(user="exec: {apiVersion: client.authentication.k8s.io/v1, command: x, "
                                          "args: --verbose}"),
                     r'users\[0\]\.user\.exec\.args: expected a list of strings, got a string',
                     id="exec-args-not-list"),
        pytest.param(kubeconfig_text(users="- name: u\n  user: {token: a}\n- name: u\n  user: {token: b}\n"),
                     r'users\[1\]\.name: "u" is already users\[0\]', id="duplicate-name"),
        pytest.param(kubeconfig_text(clusters="- name: other\n  cluster: {server: https://h:1}\n"),
                     r'contexts\[0\]\.context\.cluster: "c" is not among clusters: other',
                     id="context-cluster-missing"),
    ],
)
def test_broken_kubeconfig_names_file_and_field(tmp_path: Path, content: str | bytes, message: str) -> None:
    path = tmp_path / "config"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(KubeconfigError, match=message) as err:
        load_kubeconfig(str(path))
    assert str(err.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("cluster", "verify_mode"),
    [
        pytest.param("insecure-skip-tls-verify: false", ssl.CERT_REQUIRED, id="false"),
        pytest.param("insecure-skip-tls-verify: true", ssl.CERT_NONE, id="true"),
        # Go's decoder leaves a null field at its zero value.
        pytest.param("insecure-skip-tls-verify: null", ssl.CERT_REQUIRED, id="null-is-unset"),
        pytest.param("tls-server-name:", ssl.CERT_REQUIRED, id="empty-value-is-unset"),
    ],
)
def test_typed_fields_decode_like_client_go(tmp_path: Path, cluster: str, verify_mode: ssl.VerifyMode) -> None:
    path = tmp_path / "config"
    path.write_text(kubeconfig_text(cluster=f"server: https://h:1\n    {cluster}"))
    cfg = load_kubeconfig(str(path))
    assert cfg.ssl_context is not None
    assert cfg.ssl_context.verify_mode == verify_mode


async def test_base64_may_span_lines_and_paths_resolve_per_file(tmp_path: Path, pki: dict[str, bytes]) -> None:
    # Go's base64 decoder skips line breaks; a second file's relative paths are relative to it.
    (tmp_path / "second").mkdir()
    (tmp_path / "second" / "tok").write_text("from-second")
    wrapped = "\n".join(textwrap.wrap(b64(pki["ca"]), 64))
    first = tmp_path / "first"
    first.write_text(yaml.safe_dump({
        "current-context": "ctx",
        "clusters": [{"name": "c", "cluster": {"server": "https://h:1", "certificate-authority-data": wrapped}}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
    }))
    second = tmp_path / "second" / "config"
    second.write_text(yaml.safe_dump({"users": [{"name": "u", "user": {"tokenFile": "tok"}}]}))
    cfg = load_kubeconfig([str(first), str(second)])
    assert cfg.ssl_context is not None
    assert ca_subjects(cfg.ssl_context) == ["test-ca"]
    assert await cfg.credentials.authorization() == "Bearer from-second"


def counting_plugin(tmp_path: Path, expiry: str | None) -> ExecConfig:
    """An exec plugin that counts its runs in a file and returns a token valid until expiry."""
    script = tmp_path / "plugin.py"
    status = {"token": "exec-token", **({"expirationTimestamp": expiry} if expiry else {})}
    script.write_text(
        "import json, pathlib\n"
        f"runs = pathlib.Path({str(tmp_path / 'runs')!r})\n"
        "runs.write_text(str(int(runs.read_text() if runs.exists() else '0') + 1))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        f"                  'status': {status!r}}}))\n"
    )
    return ExecConfig(command=sys.executable, args=[str(script)])


def plugin_runs(tmp_path: Path) -> int:
    runs = tmp_path / "runs"
    return int(runs.read_text()) if runs.exists() else 0


def rfc3339(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_exec_token_with_seconds_left_is_reused(tmp_path: Path) -> None:
    # A token that expires in 5 s is still good now; re-running the plugin per request is not.
    cred = Credentials(exec_config=counting_plugin(tmp_path, rfc3339(dt.datetime.now(dt.UTC).timestamp() + 5)))
    assert await cred.authorization() == "Bearer exec-token"
    assert await cred.authorization() == "Bearer exec-token"
    assert plugin_runs(tmp_path) == 1


START = 1_800_000_000.0  # the fake wall clock's start, epoch seconds


@pytest.mark.parametrize(
    ("expires_in", "request_times", "runs"),
    [
        pytest.param(5.0, [0.0, 4.0], 1, id="short-lived-cached-until-expiry"),
        pytest.param(5.0, [0.0, 4.0, 6.0], 2, id="rerun-once-past-expiry"),
        pytest.param(3600.0, [0.0, 3599.0, 3601.0], 2, id="hour-token"),
        pytest.param(None, [0.0, 10.0**6], 1, id="no-expiry-cached-until-401"),
        # client-go re-runs the plugin while the credential it returned is past its expiry.
        pytest.param(-1.0, [0.0, 0.0], 2, id="expired-on-arrival"),
    ],
)
async def test_exec_credential_cached_until_expiration_timestamp(
    tmp_path: Path, expires_in: float | None, request_times: list[float], runs: int
) -> None:
    clock = FakeClock(START)
    expiry = rfc3339(START + expires_in) if expires_in is not None else None
    cred = Credentials(exec_config=counting_plugin(tmp_path, expiry), clock=clock.now)
    for t in request_times:
        clock.set(START + t)
        assert await cred.authorization() == "Bearer exec-token"
    assert plugin_runs(tmp_path) == runs


async def test_exec_credential_rerun_after_invalidate(tmp_path: Path) -> None:
    clock = FakeClock(START)
    cred = Credentials(exec_config=counting_plugin(tmp_path, None), clock=clock.now)
    await cred.authorization()
    cred.invalidate()
    await cred.authorization()
    assert plugin_runs(tmp_path) == 2


async def test_token_file_wins_over_token(tmp_path: Path) -> None:
    (tmp_path / "tok").write_text("from-file\n")
    cfg = load_kubeconfig(str(write_config(tmp_path, {"token": "static", "tokenFile": "tok"})))
    assert await cfg.credentials.authorization() == "Bearer from-file"


@pytest.mark.parametrize(
    ("token", "first_file", "wait", "later_file", "first", "later"),
    [
        pytest.param("static", "one", 0.0, "one", "one", "one", id="file-wins-over-token"),
        pytest.param("", "one", 30.0, "two", "one", "one", id="cached-within-a-minute"),
        pytest.param("", "one", 61.0, "two", "one", "two", id="reread-after-a-minute"),
        pytest.param("static", "one", 61.0, "two", "one", "two", id="reread-with-token-set"),
        pytest.param("static", None, 61.0, None, "static", "static", id="unreadable-falls-back-to-token"),
        pytest.param("static", None, 61.0, "one", "static", "one", id="file-appears-later"),
        pytest.param("", "one", 61.0, None, "one", "one", id="deleted-keeps-last-read"),
        pytest.param("static", "one", 61.0, None, "one", "one", id="deleted-keeps-last-read-not-token"),
    ],
)
async def test_token_file_refresh(
    tmp_path: Path, token: str, first_file: str | None, wait: float, later_file: str | None, first: str, later: str
) -> None:
    tok = tmp_path / "tok"

    def put(content: str | None) -> None:
        if content is None:
            tok.unlink(missing_ok=True)
        else:
            tok.write_text(content + "\n")

    clock = FakeClock(START)
    cred = Credentials(token=token, token_file=str(tok), clock=clock.now)
    put(first_file)
    assert await cred.authorization() == f"Bearer {first}"
    put(later_file)
    clock.step(wait)
    assert await cred.authorization() == f"Bearer {later}"


async def test_token_file_unreadable_without_token_is_an_error(tmp_path: Path) -> None:
    cred = Credentials(token_file=str(tmp_path / "absent"), clock=FakeClock(START).now)
    with pytest.raises(KubeconfigError, match=r"cannot read tokenFile .*absent"):
        await cred.authorization()


@pytest.mark.parametrize(
    ("output", "message"),
    [
        pytest.param("not json", r"printed no valid ExecCredential", id="not-json"),
        pytest.param('{"status": {"token": "t", "expirationTimestamp": "soon"}}',
                     r"printed no valid ExecCredential: .*expirationTimestamp", id="bad-timestamp"),
        pytest.param('{"status": {"token": 7}}', r"printed no valid ExecCredential: .*status\.token", id="token-type"),
        pytest.param('{"status": {}}', r"returned no status\.token", id="no-token"),
    ],
)
async def test_exec_plugin_bad_output_is_clear(tmp_path: Path, output: str, message: str) -> None:
    cred = Credentials(exec_config=ExecConfig(command=sys.executable, args=["-c", f"print({output!r})"]))
    with pytest.raises(KubeconfigError, match=message):
        await cred.authorization()


async def test_token_wins_over_exec(tmp_path: Path) -> None:
    # As client-go: the bearer token is set first and the exec round tripper then stays out.
    cred = Credentials(token="static", exec_config=counting_plugin(tmp_path, None))
    assert await cred.authorization() == "Bearer static"
    cred.invalidate()
    assert await cred.authorization() == "Bearer static"
    assert plugin_runs(tmp_path) == 0
