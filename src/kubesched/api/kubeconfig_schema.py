"""The kubeconfig file format (clientcmd v1) as typed structs, and decoding one file into them.

client-go turns the YAML into JSON and unmarshals it into typed Go structs, so a value of the wrong
type (`insecure-skip-tls-verify: "false"`) is an error naming the field, never a truthy string. This
module does the same with msgspec: YAML -> plain objects -> `msgspec.convert`, and msgspec's
`$.clusters[0]...` paths become `file: clusters[0]...: expected X, got Y` messages.

Like Go's decoder, a null mapping value means "not set"; unknown fields are ignored.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any

import msgspec
import yaml


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used; the message names the file, the field and what is valid."""


class ExecEnvVar(msgspec.Struct, kw_only=True):
    name: str
    value: str = ""


class ExecSpec(msgspec.Struct, kw_only=True):
    command: str
    api_version: str = msgspec.field(default="", name="apiVersion")
    args: list[str] = msgspec.field(default_factory=list)
    env: list[ExecEnvVar] = msgspec.field(default_factory=list)
    provide_cluster_info: bool = msgspec.field(default=False, name="provideClusterInfo")
    install_hint: str = msgspec.field(default="", name="installHint")
    interactive_mode: str = msgspec.field(default="", name="interactiveMode")


class ClusterSpec(msgspec.Struct, kw_only=True, rename="kebab"):
    server: str = ""
    tls_server_name: str = ""
    insecure_skip_tls_verify: bool = False
    certificate_authority: str = ""
    # []byte in Go (base64 in JSON); kept as text so base64 is checked here, with Go's leniency.
    certificate_authority_data: str = ""
    proxy_url: str = ""
    disable_compression: bool = False


class UserSpec(msgspec.Struct, kw_only=True):
    client_certificate: str = msgspec.field(default="", name="client-certificate")
    client_certificate_data: str = msgspec.field(default="", name="client-certificate-data")
    client_key: str = msgspec.field(default="", name="client-key")
    client_key_data: str = msgspec.field(default="", name="client-key-data")
    token: str = ""
    token_file: str = msgspec.field(default="", name="tokenFile")
    username: str = ""
    password: str = ""
    auth_provider: dict[str, Any] | None = msgspec.field(default=None, name="auth-provider")
    exec: ExecSpec | None = None


class ContextSpec(msgspec.Struct, kw_only=True):
    cluster: str = ""
    user: str = ""
    namespace: str = ""


class NamedCluster(msgspec.Struct, kw_only=True):
    name: str
    cluster: ClusterSpec


class NamedUser(msgspec.Struct, kw_only=True):
    name: str
    user: UserSpec


class NamedContext(msgspec.Struct, kw_only=True):
    name: str
    context: ContextSpec


class KubeconfigFile(msgspec.Struct, kw_only=True):
    clusters: list[NamedCluster] = msgspec.field(default_factory=list)
    users: list[NamedUser] = msgspec.field(default_factory=list)
    contexts: list[NamedContext] = msgspec.field(default_factory=list)
    current_context: str = msgspec.field(default="", name="current-context")


# --- messages ------------------------------------------------------------------------------------

# msgspec's type names, as a kubeconfig author would say them.
_TYPE_WORDS = {
    "bool": "a boolean (true or false, unquoted)",
    "str": "a string",
    "int": "an integer",
    "float": "a number",
    "array": "a list",
    "object": "a mapping",
}
# What a field holds, for "expected ..." and "required" messages where the bare type says too little.
_FIELD_HINTS = {
    "clusters": "a list of {name, cluster} entries",
    "users": "a list of {name, user} entries",
    "contexts": "a list of {name, context} entries",
    "cluster": "a mapping with at least server",
    "user": "a mapping of credentials ({} for none)",
    "context": "a mapping with cluster and user",
    "exec": "a mapping with apiVersion and command",
    "args": "a list of strings",
    "env": "a list of {name, value} entries",
    "name": "a string",
    "command": "a string",
}
_ENTRY_HINTS = {"clusters": "cluster", "users": "user", "contexts": "context"}
_ERROR = re.compile(r"^(?P<what>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<types>[^`]+)`, got `[^`]+`$")
_MISSING = re.compile(r"^Object missing required field `(?P<field>[^`]+)`$")
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def describe(value: Any) -> str:
    """What a value is, for "got ...": its kind, never the value (a token may be in the wrong field,
    or typed as a number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _segments(path: str) -> list[str | int]:
    return [key if key else int(i) for key, i in _SEGMENT.findall(path)]


def _lookup(doc: Any, segments: list[str | int]) -> tuple[bool, Any]:
    node = doc
    for seg in segments:
        try:
            node = node[seg]
        except (KeyError, IndexError, TypeError):
            return False, None
    return True, node


def _where(segments: list[str | int]) -> str:
    out = ""
    for seg in segments:
        out += f"[{seg}]" if isinstance(seg, int) else (f".{seg}" if out else seg)
    return out or "the top level"


def _field_hint(segments: list[str | int]) -> str | None:
    if not segments:
        return "a mapping with clusters, users, contexts and current-context"
    last = segments[-1]
    if isinstance(last, int):
        parent = segments[-2] if len(segments) > 1 else None
        entry = _ENTRY_HINTS.get(parent) if isinstance(parent, str) else None
        return f"a mapping with name and {entry}" if entry else None
    # A field that merely shares a section's name (a context's `cluster: c`) is a plain string.
    if last in _ENTRY_HINTS and len(segments) > 1:
        return None
    if last in ("cluster", "user") and len(segments) > 2 and segments[-2] == "context":
        return None
    return _FIELD_HINTS.get(last)


def explain(err: msgspec.ValidationError, doc: Any) -> str:
    """`clusters[0].cluster.x: expected a boolean (...), got the string "false"` from msgspec's error."""
    m = _ERROR.match(str(err))
    what, path = (m.group("what"), m.group("path")) if m else (str(err), None)
    # msgspec names no path for the document itself.
    segments = _segments(path or "")
    if missing := _MISSING.match(what):
        segments = [*segments, missing.group("field")]
        hint = _field_hint(segments)
        return f"{_where(segments)}: required" + (f": {hint}" if hint else "")
    found, value = _lookup(doc, segments)
    got = f", got {describe(value)}" if found else ""
    if expected := _EXPECTED.match(what):
        words = _field_hint(segments) or " or ".join(
            _TYPE_WORDS.get(t, t) for t in expected.group("types").split(" | ")
        )
        # YAML reads 0123 or yes-like words as numbers and booleans: the usual fix is quotes.
        if words == "a string" and isinstance(value, int | float | bool):
            got += " (quote it)"
        return f"{_where(segments)}: expected {words}{got}"
    return f"{_where(segments)}: {what}{got}"


# --- reading one file ----------------------------------------------------------------------------


def _drop_nulls(node: Any) -> Any:
    """Go's decoder leaves a field at its zero value for null; a null list entry stays (an error)."""
    if isinstance(node, dict):
        return {k: _drop_nulls(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_drop_nulls(v) for v in node]
    return node


def read_file(path: Path) -> tuple[KubeconfigFile, bool]:
    """One kubeconfig file, typed; and whether it was empty (which kubectl accepts in a merge)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise KubeconfigError(f"cannot read kubeconfig {path}: {e.strerror or e}") from e
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise KubeconfigError(
            f"{path}: not UTF-8 text: byte 0x{data[e.start]:02x} at line {line}; "
            "a kubeconfig is YAML in UTF-8 (re-save it as UTF-8)"
        ) from e
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise KubeconfigError(f"{path}: not valid YAML: {yaml_error(e)}") from None
    if raw is None:
        return KubeconfigFile(), True
    doc = _drop_nulls(raw)
    try:
        return msgspec.convert(doc, KubeconfigFile, strict=True), False
    except msgspec.ValidationError as e:
        raise KubeconfigError(f"{path}: {explain(e, doc)}") from e


def yaml_error(err: yaml.YAMLError) -> str:
    """What is wrong and where (line, column), without PyYAML's snippet of the line, which may hold a
    token or a key, nor the text it quotes from the file (an alias name); the quoted token kinds
    ('<scalar>', ']', a character) are kept."""
    if not isinstance(err, yaml.MarkedYAMLError):
        return "cannot be read as YAML"

    def at(mark: Any) -> str:
        return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""

    def scrub(words: str | None) -> str:
        kept = re.sub(r"'([^']*)'", lambda m: m.group(0) if len(m.group(1)) <= 2 or
                      re.fullmatch(r"<[a-z ]+>", m.group(1)) else "", words or "")
        return re.sub(r"\s+", " ", kept).strip()

    context, problem = scrub(err.context), scrub(err.problem)
    parts = []
    if context:
        mark = at(err.context_mark)
        parts.append(f"{context} (at {mark})" if mark and err.context_mark is not err.problem_mark else context)
    parts.append(problem or "cannot be read")
    where = at(err.problem_mark)
    return ": ".join(parts) + (f" at {where}" if where else "")


def decode_base64(text: str) -> bytes:
    """Go's base64.StdEncoding, which a []byte field uses: line breaks are skipped, nothing else is."""
    try:
        return base64.b64decode(re.sub(r"[\r\n]", "", text), validate=True)
    except binascii.Error as e:
        raise ValueError(f"not valid base64 ({e}); encode the PEM file with `base64 -w0`") from e
