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
import datetime as dt
import json
import logging
import math
import os
import re
import ssl
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import msgspec
import orjson

from kubesched.api.kubeconfig_schema import (
    ClusterSpec,
    ContextSpec,
    KubeconfigError,
    KubeconfigFile,
    UserSpec,
    decode_base64,
    read_file,
)

log = logging.getLogger(__name__)

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
# client-go re-reads a token file at most once a minute; projected service-account tokens rotate.
TOKEN_FILE_REFRESH = 60.0
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
T = TypeVar("T")

__all__ = ["ClusterConfig", "Credentials", "ExecConfig", "KubeconfigError", "load_config", "load_incluster",
           "load_kubeconfig"]


@dataclass
class ExecConfig:
    command: str
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    api_version: str = EXEC_API_VERSIONS[0]
    provide_cluster_info: bool = False
    base_dir: str = ""


# Wall-clock seconds since the epoch: an exec credential's expirationTimestamp is wall-clock time.
WallClock = Callable[[], float]


class Credentials:
    """Produces the Authorization header; refreshes file and exec tokens when they go stale.

    Which credential is used follows client-go: a tokenFile wins over a token (the token is only the
    fallback until the file has been read), and either wins over an exec plugin.
    """

    def __init__(
        self,
        *,
        token: str = "",
        token_file: str = "",
        exec_config: ExecConfig | None = None,
        cluster_info: dict[str, Any] | None = None,
        clock: WallClock = time.time,
    ) -> None:
        self._token = token
        self._token_file = token_file
        # client-go's bearer-token round tripper sets Authorization first, and the exec round
        # tripper leaves a request that already carries one alone: the plugin would never run.
        self._exec = exec_config if not (token or token_file) else None
        self._cluster_info = cluster_info or {}
        self._clock = clock
        self._expires = -math.inf if self.dynamic else math.inf
        self._file_failing = False
        self._lock = asyncio.Lock()

    @property
    def dynamic(self) -> bool:
        return bool(self._token_file or self._exec)

    def invalidate(self) -> None:
        """After a 401: a dynamic token is fetched again on the next request."""
        if self.dynamic:
            self._expires = -math.inf

    def _stale(self) -> bool:
        # client-go: a credential is used until the clock is past its expiry, however close it is.
        return self._clock() > self._expires

    async def authorization(self) -> str | None:
        if self._stale():
            async with self._lock:
                if self._stale():
                    await self._refresh()
        return f"Bearer {self._token}" if self._token else None

    async def _refresh(self) -> None:
        if self._token_file:
            self._refresh_token_file()
        elif self._exec is not None:
            self._token, self._expires = await run_exec_plugin(self._exec, self._cluster_info)

    def _refresh_token_file(self) -> None:
        try:
            token = _read_token(self._token_file)
        except KubeconfigError as e:
            if not self._token:
                raise
            # As client-go's caching token source: keep the last good token (or the kubeconfig's
            # token) and try the file again on the next request, so a rotation is picked up soon.
            if not self._file_failing:
                log.warning("%s; using the token read before", e)
            self._file_failing = True
            return
        self._file_failing = False
        self._token = token
        self._expires = self._clock() + TOKEN_FILE_REFRESH


def _read_token(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError) as e:
        detail = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise KubeconfigError(f"cannot read tokenFile {path!r}: {detail}") from e


class _ExecStatus(msgspec.Struct):
    token: str = ""
    expiration_timestamp: Annotated[dt.datetime, msgspec.Meta(tz=True)] | None = msgspec.field(
        default=None, name="expirationTimestamp"
    )


class _ExecCredential(msgspec.Struct):
    status: _ExecStatus | None = None


async def run_exec_plugin(cfg: ExecConfig, cluster_info: Mapping[str, Any]) -> tuple[str, float]:
    """Run a client.authentication.k8s.io ExecCredential plugin; returns (token, expiry as epoch
    seconds, infinite when the plugin names none)."""
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
        status = msgspec.json.decode(out, type=_ExecCredential).status or _ExecStatus()
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise KubeconfigError(f"exec credential plugin {cfg.command!r} printed no valid ExecCredential: {e}") from e
    if not status.token:
        raise KubeconfigError(
            f"exec credential plugin {cfg.command!r} returned no status.token "
            "(client certificates from exec plugins are not supported)"
        )
    expiry = status.expiration_timestamp
    return status.token, expiry.timestamp() if expiry is not None else math.inf


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
    proxy_url: str = ""  # the cluster's proxy-url; "" leaves the proxy to HTTPS_PROXY, HTTP_PROXY, NO_PROXY


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


@dataclass(frozen=True)
class _Entry(Generic[T]):
    """A named entry with where it came from: relative paths and messages refer to its own file."""

    body: T
    file: Path
    where: str  # e.g. "clusters[0].cluster"

    def at(self, field_name: str) -> str:
        return f"{self.file}: {self.where}.{field_name}"


def _named(docs: Sequence[tuple[Path, KubeconfigFile]], section: str) -> dict[str, _Entry[Any]]:
    """Name -> entry over all files; the first file to define a name wins, as in kubectl."""
    out: dict[str, _Entry[Any]] = {}
    for path, doc in docs:
        seen: dict[str, int] = {}
        for i, item in enumerate(getattr(doc, section)):
            # client-go refuses a name twice in one file (only merging files may repeat one).
            if item.name in seen:
                raise KubeconfigError(
                    f"{path}: {section}[{i}].name: {json.dumps(item.name)} is already {section}[{seen[item.name]}]; "
                    "names must be unique within a file"
                )
            seen[item.name] = i
            body_field = section[:-1]
            out.setdefault(item.name, _Entry(getattr(item, body_field), path, f"{section}[{i}].{body_field}"))
    return out


def _resolve(base: Path, name: str) -> Path:
    path = Path(os.path.expanduser(name))
    return path if path.is_absolute() else base.parent / path


def _data_or_file(entry: _Entry[Any], data_key: str, file_key: str) -> bytes | None:
    data: str = getattr(entry.body, data_key.replace("-", "_"))
    if data:
        try:
            return decode_base64(data)
        except ValueError as e:
            raise KubeconfigError(f"{entry.at(data_key)}: {e}") from e
    name: str = getattr(entry.body, file_key.replace("-", "_"))
    if name:
        path = _resolve(entry.file, name)
        try:
            return path.read_bytes()
        except OSError as e:
            raise KubeconfigError(f"{entry.at(file_key)}: cannot read {path}: {e.strerror or e}") from e
    return None


def _choices(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "(none defined)"


def load_kubeconfig(paths: str | Sequence[str], context: str | None = None) -> ClusterConfig:
    """Load one kubeconfig, or several merged (the first file to define a name wins)."""
    path_list = [paths] if isinstance(paths, str) else list(paths)
    path_list = [p for p in path_list if p]
    if not path_list:
        raise KubeconfigError("no kubeconfig path given")
    files = [Path(os.path.expanduser(p)) for p in path_list]
    read = [(path, *read_file(path)) for path in files]
    docs = [(path, doc) for path, doc, _ in read]
    source = os.pathsep.join(path_list)
    if all(empty for _, _, empty in read):
        raise KubeconfigError(f"{source}: the file is empty; a kubeconfig needs clusters, users, contexts "
                              "and a current-context")
    clusters = _named(docs, "clusters")
    users = _named(docs, "users")
    contexts = _named(docs, "contexts")

    if context:
        ctx_name = context
        if ctx_name not in contexts:
            raise KubeconfigError(
                f"{source}: --context {json.dumps(ctx_name)} is not among contexts: {_choices(contexts)}"
            )
    else:
        current = next(((path, d.current_context) for path, d in docs if d.current_context), None)
        if current is None:
            raise KubeconfigError(
                f"{source}: current-context: not set and no --context given; contexts: {_choices(contexts)}"
            )
        current_file, ctx_name = current
        if ctx_name not in contexts:
            raise KubeconfigError(
                f"{current_file}: current-context: {json.dumps(ctx_name)} is not among contexts: {_choices(contexts)}"
            )
    ctx: _Entry[ContextSpec] = contexts[ctx_name]
    cluster_name, user_name = ctx.body.cluster, ctx.body.user
    if cluster_name not in clusters:
        raise KubeconfigError(
            f"{ctx.at('cluster')}: {json.dumps(cluster_name)} is not among clusters: {_choices(clusters)}"
        )
    if user_name and user_name not in users:
        raise KubeconfigError(f"{ctx.at('user')}: {json.dumps(user_name)} is not among users: {_choices(users)}")
    cluster: _Entry[ClusterSpec] = clusters[cluster_name]
    user: _Entry[UserSpec] = users.get(user_name) or _Entry(UserSpec(), ctx.file, "(no user)")

    server = cluster.body.server
    if not server.startswith(("https://", "http://")):
        raise KubeconfigError(f"{cluster.at('server')}: must be an http(s) URL, got {json.dumps(server)}")
    server = server.rstrip("/")
    proxy_url = _proxy_url(cluster.at("proxy-url"), cluster.body.proxy_url) if cluster.body.proxy_url else ""

    insecure = cluster.body.insecure_skip_tls_verify
    ca = _data_or_file(cluster, "certificate-authority-data", "certificate-authority")
    if insecure and ca:
        raise KubeconfigError(
            f"{cluster.file}: {cluster.where}: insecure-skip-tls-verify and a certificate-authority are "
            "mutually exclusive"
        )
    cert = _data_or_file(user, "client-certificate-data", "client-certificate")
    key = _data_or_file(user, "client-key-data", "client-key")
    if bool(cert) != bool(key):
        raise KubeconfigError(
            f"{user.file}: {user.where}: client-certificate(-data) and client-key(-data) must be given together"
        )
    for unsupported, value in (("username", user.body.username), ("auth-provider", user.body.auth_provider)):
        if value:
            raise KubeconfigError(
                f"{user.at(unsupported)}: not supported; use client certificates, token, tokenFile or exec"
            )

    exec_cfg = _exec_config(user) if user.body.exec is not None else None
    token_file = str(_resolve(user.file, user.body.token_file)) if user.body.token_file else ""
    cluster_info: dict[str, Any] = {"server": server, "insecure-skip-tls-verify": insecure}
    if ca:
        cluster_info["certificate-authority-data"] = base64.b64encode(ca).decode()
    credentials = Credentials(
        token=user.body.token,
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
        tls_server_name=cluster.body.tls_server_name or None,
        namespace=ctx.body.namespace or "default",
        proxy_url=proxy_url,
    )


def _proxy_url(where: str, value: str) -> str:
    """clientcmd's parseProxyURL (http, https or socks5), without printing the URL (it may carry a
    password)."""
    try:
        url = urllib.parse.urlsplit(value)
        _ = url.port
    except ValueError:
        raise KubeconfigError(f"{where}: not a URL; expected http(s)://[user:password@]host:port") from None
    if url.scheme not in ("http", "https", "socks5"):
        scheme = url.scheme if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]{0,15}", url.scheme) else "?"
        raise KubeconfigError(f'{where}: unsupported scheme "{scheme}", must be http, https or socks5')
    if not url.hostname:
        raise KubeconfigError(f"{where}: no host; expected http(s)://[user:password@]host:port")
    return value


def _exec_config(user: _Entry[UserSpec]) -> ExecConfig:
    spec = user.body.exec
    assert spec is not None
    if not spec.command:
        raise KubeconfigError(f"{user.at('exec.command')}: required: the credential plugin to run")
    if spec.api_version not in EXEC_API_VERSIONS:
        raise KubeconfigError(
            f"{user.at('exec.apiVersion')}: is {json.dumps(spec.api_version)}; valid: {', '.join(EXEC_API_VERSIONS)}"
        )
    return ExecConfig(
        command=spec.command,
        args=list(spec.args),
        env={v.name: v.value for v in spec.env},
        api_version=spec.api_version,
        provide_cluster_info=spec.provide_cluster_info,
        base_dir=str(user.file.parent),
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
