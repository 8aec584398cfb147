"""R5 of the reliability suite (issue 15), the unit half: generated bad configs and kubeconfigs.

Hypothesis takes a complete, valid document (every field of kubesched's default
KubeSchedulerConfiguration, leader election included; a kubeconfig with every field kubesched
reads), replaces one field — any of them, leaf or section — by a value of a wrong type or out of
range, and loads it. The load either accepts it (a value that happens to be valid) or refuses it
with a ConfigError / KubeconfigError naming that field (or one inside it); anything else — another
exception, an error naming an unrelated field, an empty message — fails.
"""

from __future__ import annotations

import base64
import copy
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kubesched.api.kubeconfig import KubeconfigError, load_kubeconfig
from kubesched.config import ConfigError
from kubesched.config.load import from_dict
from tests.paths import REPO as REPO_ROOT

ROOT = REPO_ROOT
DEFAULT = yaml.safe_load((ROOT / "examples" / "config" / "default.yaml").read_text())
DEFAULT["leaderElection"] = {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
                             "retryPeriod": "2s", "resourceLock": "leases", "resourceName": "kubesched",
                             "resourceNamespace": "kube-system"}
DEFAULT["parallelism"] = 16

# A mutation of one field can be refused at a field it is checked against.
COUPLED = {"podInitialBackoffSeconds": ("podMaxBackoffSeconds",),
           "leaderElection.leaseDuration": ("leaderElection.renewDeadline",),
           "leaderElection.renewDeadline": ("leaderElection.leaseDuration",),
           "leaderElection.retryPeriod": ("leaderElection.renewDeadline",)}


Path_ = tuple[str, tuple[str | int, ...]]  # as ConfigError spells it, and the keys to reach it


def _paths(doc: Any, prefix: str = "", keys: tuple[str | int, ...] = ()) -> Iterator[Path_]:
    """Every field of the document, sections and leaves."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            # A map key that is not a field name (a label key) is written in brackets.
            path = f"{prefix}[{key}]" if any(c in str(key) for c in "./") else (
                f"{prefix}.{key}" if prefix else str(key))
            yield path, (*keys, key)
            yield from _paths(value, path, (*keys, key))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            path = f"{prefix}[{i}]"
            yield path, (*keys, i)
            yield from _paths(value, path, (*keys, i))


def _set(doc: Any, keys: tuple[str | int, ...], value: Any) -> Any:
    """A copy of doc with the field reached by `keys` set to value."""
    out = copy.deepcopy(doc)
    node = out
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return out


CONFIG_PATHS = [p for p in _paths(DEFAULT) if p[0] not in ("apiVersion", "kind")]

BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([-1, 0, 101, 2**31, 2**63, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
    st.sampled_from(["", "*", "-1s", "1h1h", "NaN", "1e400", "😀", "0x10", "99999999999999999999s"]),
    st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.just([{}]), st.just({"name": None}),
)


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def _relates(error_path: str, path: str) -> bool:
    """The field itself, one inside it, the section holding it (which shows its value, as in
    `nodes: Invalid value: {"matchLabels": null}`), or a field it is checked against: a profile's
    plugin lists together decide whether it has its one queue sort and a bind plugin."""
    plugins = path.split(".plugins.")[0] + ".plugins" if ".plugins." in path else None
    return (error_path == path or error_path.startswith((path + ".", path + "["))
            or (error_path != "" and error_path == _parent(path)) or error_path in COUPLED.get(path, ())
            or (plugins is not None and error_path.startswith(plugins + ".")))


def test_every_field_of_the_default_config_is_reached() -> None:
    assert len(CONFIG_PATHS) > 120, len(CONFIG_PATHS)
    assert from_dict(DEFAULT, source="default") is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(CONFIG_PATHS), value=BAD_VALUES)
def test_a_bad_config_field_is_refused_by_name_or_accepted(field: Path_, value: Any) -> None:
    path, keys = field
    doc = _set(DEFAULT, keys, value)
    refused: ConfigError | None = None
    try:
        from_dict(doc, source="sched.yaml")
    except ConfigError as exc:
        refused = exc
    if refused is not None:
        paths = [e.path for e in refused.errors]
        assert all(str(e) for e in refused.errors)
        assert any(_relates(p, path) for p in paths), f"{path}={value!r} refused at {paths}: {refused}"
        assert str(refused).startswith("sched.yaml"), str(refused)


# --- kubeconfigs ------------------------------------------------------------------------------------

CA_PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
KUBECONFIG = {
    "apiVersion": "v1", "kind": "Config", "current-context": "ctx", "preferences": {},
    "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:6443", "tls-server-name": "kubernetes",
                                           "insecure-skip-tls-verify": True, "proxy-url": ""}}],
    "users": [{"name": "u", "user": {"token": "t", "tokenFile": "", "exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": "get-token", "args": ["a"],
        "env": [{"name": "K", "value": "V"}], "interactiveMode": "Never", "provideClusterInfo": False}}}],
    "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
}
KUBECONFIG_PATHS = list(_paths(KUBECONFIG))
BAD_KUBECONFIG_VALUES = st.one_of(
    BAD_VALUES, st.sampled_from(["ftp://x", "https://", "not a url", base64.b64encode(CA_PEM).decode(),
                                 "nosuchcontext", "false", "yes"]))


def _names_the_field(message: str, path: str) -> bool:
    """A kubeconfig error names the file, and the entry or field: the last key of the path, the
    section's entry (clusters[0] is named by its name), or what the section's field is used for."""
    keys = [k.split("[")[0] for k in path.split(".") if k.split("[")[0]]
    return any(k in message for k in keys) or any(w in message for w in ("context", "cluster", "user"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(KUBECONFIG_PATHS), value=BAD_KUBECONFIG_VALUES)
def test_a_bad_kubeconfig_field_is_refused_by_name_or_accepted(field: Path_, value: Any) -> None:
    path, keys = field
    doc = _set(KUBECONFIG, keys, value)
    with tempfile.TemporaryDirectory() as d:
        file = Path(d) / "kubeconfig"
        file.write_text(yaml.safe_dump(doc))
        message: str | None = None
        try:
            load_kubeconfig(str(file))
        except KubeconfigError as exc:
            message = str(exc)
        if message is not None:
            assert message, path
            assert str(file) in message or "kubeconfig" in message, message
            assert _names_the_field(message, path), f"{path}={value!r}: {message}"


@pytest.mark.parametrize("text", ["", "[]", "- 1", "{", "clusters: 3", "\x00", "apiVersion: v1\nkind: Config\n"],
                         ids=["empty", "list", "yaml-list", "unclosed", "clusters-int", "nul", "nothing"])
def test_a_kubeconfig_that_is_not_one_is_refused(text: str, tmp_path: Path) -> None:
    file = tmp_path / "kubeconfig"
    file.write_text(text)
    with pytest.raises(KubeconfigError) as info:
        load_kubeconfig(str(file))
    assert str(file) in str(info.value)
