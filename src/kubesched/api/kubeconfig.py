"""Where the apiserver is and how to prove who we are: kubeconfig files and the in-cluster
service account.

Resolution order when no file is named: `KUBECONFIG` (a path list, merged first-wins like
kubectl), then the in-cluster service account if `KUBERNETES_SERVICE_HOST` is set, then
`~/.kube/config`.

The TLS context is always built from the kubeconfig's own CA. This machine (and many CI images)
set SSL_CERT_FILE / REQUESTS_CA_BUNDLE; those must never replace the cluster's CA, so the context
is made by hand and the HTTP session runs with `trust_env=False`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime as dt
import logging
import os
import ssl
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import yaml

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# client-go re-reads a token file at most once a minute; projected service-account tokens rotate.
TOKEN_FILE_REFRESH = 60.0
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used; the message names the file, the field and what is valid."""


@dataclass
class ExecConfig:
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    api_version: str = EXEC_API_VERSIONS[0]
    provide_cluster_info: bool = False
    base_dir: str = ""


class Credentials:
    """Produces the Authorization header; refreshes file and exec tokens when they go stale."""

    def __init__(
        self,
        *,
        token: str = "",
        token_file: str = "",
        exec_config: ExecConfig | None = None,
        cluster_info: dict[str, Any] | None = None,
    ) -> None:
        self._token = token
        self._token_file = token_file
        self._exec = exec_config
        self._cluster_info = cluster_info or {}
        self._expires = 0.0 if (token_file or exec_config) and not token else float("inf")
        self._lock = asyncio.Lock()

    @property
    def dynamic(self) -> bool:
        return bool(self._token_file or self._exec)

    def invalidate(self) -> None:
        """After a 401: a dynamic token is fetched again on the next request."""
        if self.dynamic:
            self._expires = 0.0

    async def authorization(self) -> str | None:
        if time.monotonic() >= self._expires:
            async with self._lock:
                if time.monotonic() >= self._expires:
                    await self._refresh()
        return f"Bearer {self._token}" if self._token else None

    async def _refresh(self) -> None:
        if self._token_file:
            self._token = _read_token(self._token_file)
            self._expires = time.monotonic() + TOKEN_FILE_REFRESH
        elif self._exec is not None:
            self._token, lifetime = await run_exec_plugin(self._exec, self._cluster_info)
            self._expires = time.monotonic() + lifetime


def _read_token(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as e:
        raise KubeconfigError(f"cannot read tokenFile {path!r}: {e.strerror or e}") from e


async def run_exec_plugin(cfg: ExecConfig, cluster_info: Mapping[str, Any]) -> tuple[str, float]:
    """Run a client.authentication.k8s.io ExecCredential plugin; returns (token, seconds valid)."""
    spec: dict[str, Any] = {"interactive": False}
    if cfg.provide_cluster_info:
        spec["cluster"] = dict(cluster_info)
    exec_info = {"apiVersion": cfg.api_version, "kind": "ExecCredential", "spec": spec}
    env = {**os.environ, **cfg.env, "KUBERNETES_EXEC_INFO": orjson.dumps(exec_info).decode()}
    command = cfg.command
    if os.sep in command and not os.path.isabs(command) and cfg.base_dir:
        command = os.path.join(cfg.base_dir, command)
    try:
        proc = await asyncio.create_subprocess_exec(
            command, *cfg.args, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    except (OSError, TimeoutError) as e:
        raise KubeconfigError(f"exec credential plugin {cfg.command!r} failed to run: {e}") from e
    if proc.returncode != 0:
        raise KubeconfigError(
            f"exec credential plugin {cfg.command!r} exited with {proc.returncode}: "
            f"{err.decode(errors='replace').strip()}"
        )
    try:
        status = orjson.loads(out).get("status") or {}
    except orjson.JSONDecodeError as e:
        raise KubeconfigError(f"exec credential plugin {cfg.command!r} printed no ExecCredential JSON") from e
    token = status.get("token", "")
    if not token:
        raise KubeconfigError(
            f"exec credential plugin {cfg.command!r} returned no status.token "
            "(client certificates from exec plugins are not supported)"
        )
    lifetime = float("inf")
    expiry = status.get("expirationTimestamp")
    if expiry:
        when = dt.datetime.fromisoformat(expiry.replace("Z", "+00:00"))
        # Refresh a little early so a request never carries a token that expires in transit.
        lifetime = max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds() - 10)
    return token, lifetime


@dataclass
class ClusterConfig:
    """Everything needed to open a session to one apiserver."""

    server: str
    ssl_context: ssl.SSLContext | None
    credentials: Credentials
    source: str  # the file or "in-cluster", for messages
    context: str = ""
    tls_server_name: str | None = None
    namespace: str = "default"


# --- building an SSL context ---------------------------------------------------------------------


def build_ssl_context(
    *,
    ca_pem: bytes | None,
    cert_pem: bytes | None = None,
    key_pem: bytes | None = None,
    insecure: bool = False,
) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    elif ca_pem:
        ctx.load_verify_locations(cadata=ca_pem.decode())
    else:
        # No CA named: the system roots, like client-go.
        ctx.load_default_certs(ssl.Purpose.SERVER_AUTH)
    if cert_pem and key_pem:
        # ssl can only load a client certificate from files; keep them private and short-lived.
        with tempfile.TemporaryDirectory(prefix="kubesched-tls-") as tmp:
            cert_path, key_path = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
            for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
            ctx.load_cert_chain(cert_path, key_path)
    return ctx


# --- kubeconfig files ----------------------------------------------------------------------------


def _named(doc: Mapping[str, Any], section: str, source: str) -> dict[str, dict[str, Any]]:
    items = doc.get(section) or []
    if not isinstance(items, list):
        raise KubeconfigError(f"{source}: {section!r} must be a list of {{name, {section[:-1]}}} entries")
    out: dict[str, dict[str, Any]] = {}
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise KubeconfigError(f"{source}: {section}[{i}] needs a string 'name'")
        body = item.get(section[:-1]) or {}
        if not isinstance(body, dict):
            raise KubeconfigError(f"{source}: {section}[{i}].{section[:-1]} must be a mapping")
        out.setdefault(item["name"], {**body, "_dir": item.get("_dir", "")})
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as e:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {e.strerror or e}") from e
    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise KubeconfigError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(doc, dict):
        raise KubeconfigError(f"{path}: a kubeconfig must be a mapping with clusters, users and contexts")
    # Relative paths inside a kubeconfig are relative to the file that names them.
    for section in ("clusters", "users"):
        for item in doc.get(section) or []:
            if isinstance(item, dict):
                item["_dir"] = str(path.parent)
    return doc


def _data_or_file(
    body: Mapping[str, Any], data_key: str, file_key: str, where: str
) -> bytes | None:
    data = body.get(data_key)
    if data:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, TypeError) as e:
            raise KubeconfigError(f"{where}.{data_key}: not valid base64 ({e})") from e
    name = body.get(file_key)
    if name:
        path = Path(os.path.expanduser(name))
        if not path.is_absolute():
            path = Path(body.get("_dir", ""), path)
        try:
            return path.read_bytes()
        except OSError as e:
            raise KubeconfigError(f"{where}.{file_key}: cannot read {path}: {e.strerror or e}") from e
    return None


def _choices(names: Sequence[str]) -> str:
    return ", ".join(sorted(names)) or "(none defined)"


def load_kubeconfig(paths: str | Sequence[str], context: str | None = None) -> ClusterConfig:
    """Load one kubeconfig, or several merged (the first file to define a name wins)."""
    path_list = [paths] if isinstance(paths, str) else list(paths)
    path_list = [p for p in path_list if p]
    if not path_list:
        raise KubeconfigError("no kubeconfig path given")
    docs = [_read_yaml(Path(os.path.expanduser(p))) for p in path_list]
    source = os.pathsep.join(path_list)
    merged: dict[str, Any] = {"clusters": [], "users": [], "contexts": []}
    for doc in docs:
        for section in merged:
            merged[section].extend(doc.get(section) or [])
    current = next((d.get("current-context") for d in docs if d.get("current-context")), "")
    clusters = _named(merged, "clusters", source)
    users = _named(merged, "users", source)
    contexts = _named(merged, "contexts", source)

    ctx_name = context or current
    if not ctx_name:
        raise KubeconfigError(
            f"{source}: no current-context set and no --context given; contexts: {_choices(list(contexts))}"
        )
    if ctx_name not in contexts:
        raise KubeconfigError(
            f"{source}: context {ctx_name!r} not found; valid contexts: {_choices(list(contexts))}"
        )
    ctx = contexts[ctx_name]
    cluster_name, user_name = ctx.get("cluster", ""), ctx.get("user", "")
    if cluster_name not in clusters:
        raise KubeconfigError(
            f"{source}: contexts[{ctx_name!r}].cluster is {cluster_name!r}, which is not among clusters: "
            f"{_choices(list(clusters))}"
        )
    if user_name and user_name not in users:
        raise KubeconfigError(
            f"{source}: contexts[{ctx_name!r}].user is {user_name!r}, which is not among users: "
            f"{_choices(list(users))}"
        )
    cluster = clusters[cluster_name]
    user = users.get(user_name, {})
    cwhere, uwhere = f"{source}: clusters[{cluster_name!r}]", f"{source}: users[{user_name!r}]"

    server = cluster.get("server")
    if not isinstance(server, str) or not server.startswith(("https://", "http://")):
        raise KubeconfigError(f"{cwhere}.server must be an http(s) URL, got {server!r}")
    server = server.rstrip("/")

    insecure = bool(cluster.get("insecure-skip-tls-verify", False))
    ca = _data_or_file(cluster, "certificate-authority-data", "certificate-authority", cwhere)
    if insecure and ca:
        raise KubeconfigError(
            f"{cwhere}: insecure-skip-tls-verify and a certificate-authority are mutually exclusive"
        )
    cert = _data_or_file(user, "client-certificate-data", "client-certificate", uwhere)
    key = _data_or_file(user, "client-key-data", "client-key", uwhere)
    if bool(cert) != bool(key):
        raise KubeconfigError(
            f"{uwhere}: client-certificate(-data) and client-key(-data) must be given together"
        )
    for unsupported in ("username", "auth-provider"):
        if user.get(unsupported):
            raise KubeconfigError(
                f"{uwhere}.{unsupported} is not supported; use client certificates, token, tokenFile or exec"
            )

    exec_cfg = None
    if user.get("exec"):
        exec_cfg = _exec_config(user["exec"], uwhere, user.get("_dir", ""))
    token_file = user.get("tokenFile", "")
    if token_file and not os.path.isabs(token_file):
        token_file = os.path.join(user.get("_dir", ""), token_file)
    cluster_info: dict[str, Any] = {"server": server, "insecure-skip-tls-verify": insecure}
    if ca:
        cluster_info["certificate-authority-data"] = base64.b64encode(ca).decode()
    credentials = Credentials(
        token=user.get("token", "") or "",
        token_file=token_file,
        exec_config=exec_cfg,
        cluster_info=cluster_info,
    )
    ssl_context = None
    if server.startswith("https://"):
        try:
            ssl_context = build_ssl_context(ca_pem=ca, cert_pem=cert, key_pem=key, insecure=insecure)
        except ssl.SSLError as e:
            raise KubeconfigError(f"{source}: context {ctx_name!r}: bad TLS material: {e}") from e
    return ClusterConfig(
        server=server,
        ssl_context=ssl_context,
        credentials=credentials,
        source=source,
        context=ctx_name,
        tls_server_name=cluster.get("tls-server-name") or None,
        namespace=ctx.get("namespace") or "default",
    )


def _exec_config(raw: Any, where: str, base_dir: str) -> ExecConfig:
    if not isinstance(raw, dict) or not isinstance(raw.get("command"), str):
        raise KubeconfigError(f"{where}.exec needs a 'command'")
    api_version = raw.get("apiVersion", "")
    if api_version not in EXEC_API_VERSIONS:
        raise KubeconfigError(
            f"{where}.exec.apiVersion is {api_version!r}; valid: {', '.join(EXEC_API_VERSIONS)}"
        )
    env: dict[str, str] = {}
    for i, item in enumerate(raw.get("env") or []):
        if not isinstance(item, dict) or "name" not in item:
            raise KubeconfigError(f"{where}.exec.env[{i}] needs 'name' and 'value'")
        env[str(item["name"])] = str(item.get("value", ""))
    return ExecConfig(
        command=raw["command"],
        args=[str(a) for a in raw.get("args") or []],
        env=env,
        api_version=api_version,
        provide_cluster_info=bool(raw.get("provideClusterInfo", False)),
        base_dir=base_dir,
    )


def load_incluster(sa_dir: Path = SERVICE_ACCOUNT_DIR, environ: Mapping[str, str] | None = None) -> ClusterConfig:
    env = os.environ if environ is None else environ
    host, port = env.get("KUBERNETES_SERVICE_HOST", ""), env.get("KUBERNETES_SERVICE_PORT", "")
    if not host or not port:
        raise KubeconfigError(
            "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set; "
            "pass --kubeconfig or set KUBECONFIG"
        )
    token_path, ca_path = sa_dir / "token", sa_dir / "ca.crt"
    if not token_path.exists():
        raise KubeconfigError(f"in-cluster config: service account token {token_path} is missing")
    try:
        ca = ca_path.read_bytes()
    except OSError as e:
        raise KubeconfigError(f"in-cluster config: cannot read {ca_path}: {e.strerror or e}") from e
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    ns_path = sa_dir / "namespace"
    namespace = ns_path.read_text().strip() if ns_path.exists() else "default"
    return ClusterConfig(
        server=f"https://{host}:{port}",
        ssl_context=build_ssl_context(ca_pem=ca),
        credentials=Credentials(token_file=str(token_path)),
        source="in-cluster",
        namespace=namespace,
    )


def load_config(kubeconfig: str | None = None, context: str | None = None) -> ClusterConfig:
    """--kubeconfig, else KUBECONFIG, else in-cluster, else ~/.kube/config."""
    if kubeconfig:
        return load_kubeconfig(kubeconfig, context)
    env_paths = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if env_paths:
        existing = [p for p in env_paths if Path(os.path.expanduser(p)).exists()]
        if not existing:
            raise KubeconfigError(f"KUBECONFIG names no existing file: {os.environ['KUBECONFIG']}")
        return load_kubeconfig(existing, context)
    if os.environ.get("KUBERNETES_SERVICE_HOST") and not context:
        return load_incluster()
    home = Path.home() / ".kube" / "config"
    if home.exists():
        return load_kubeconfig(str(home), context)
    raise KubeconfigError(
        "no cluster configuration: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, "
        "or run in a pod with a service account"
    )
