"""kube-scheduler's flags on `kubesched run`: values checked once with the flag named, what each
overrides, and --write-config-to's file running the same configuration again."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml
from click.testing import CliRunner

from kubesched.cmd.flags import apply_deprecated, check_master, log_settings, with_master
from kubesched.cmd.main import main
from kubesched.cmd.serving_flags import from_flags
from kubesched.config import load, loads
from kubesched.config.dump import dumps
from kubesched.config.plugins import KUBE_SCHEDULER_DEFAULT_PLUGINS
from kubesched.serving.options import OptionsError, ServingOptions
from tests.paths import REPO as REPO_ROOT

ROOT = REPO_ROOT


@pytest.mark.parametrize(("log_format", "log_level", "logging_format", "v", "expected"), [
    pytest.param(None, None, None, None, ("text", "info"), id="defaults"),
    pytest.param(None, None, "json", None, ("json", "info"), id="logging-format"),
    pytest.param("json", None, "json", None, ("json", "info"), id="both-agree"),
    pytest.param(None, None, None, 2, ("text", "info"), id="v2-info"),
    pytest.param(None, None, None, 4, ("text", "debug"), id="v4-debug"),
    pytest.param(None, "warning", None, 10, ("text", "warning"), id="log-level-wins"),
])
def test_log_settings(log_format: str | None, log_level: str | None, logging_format: str | None, v: int | None,
                      expected: tuple[str, str]) -> None:
    assert log_settings(log_format, log_level, logging_format, v) == expected


def test_contradicting_log_formats_are_refused() -> None:
    with pytest.raises(click.BadParameter, match="contradicts --log-format=text"):
        log_settings("text", None, "json", None)


def test_kube_api_qps_and_burst_apply_only_without_config() -> None:
    config = load(None)
    flags = {"kube_api_qps": 500.0, "kube_api_burst": None, "leader_elect": None}
    changed, ignored = apply_deprecated(config, None, flags)
    assert (changed.client_connection.qps, changed.client_connection.burst, ignored) == (500.0, 100, [])
    assert flags == {"leader_elect": None}  # the deprecated flags are taken, the others left
    same, ignored = apply_deprecated(config, "my.yaml", {"kube_api_qps": 500.0, "kube_api_burst": 7})
    assert same is config
    assert ignored == ["--kube-api-qps", "--kube-api-burst"]


@pytest.mark.parametrize(("given", "url"), [
    pytest.param("https://10.0.0.1:6443", "https://10.0.0.1:6443", id="url"),
    pytest.param("http://localhost:8080/", "http://localhost:8080", id="trailing-slash"),
    pytest.param("10.0.0.1:6443", "https://10.0.0.1:6443", id="host-port"),
])
def test_master_urls(given: str, url: str) -> None:
    assert check_master(given) == url


@pytest.mark.parametrize("bad", ["ftp://x", "https://", "https://h:99999"])
def test_bad_master_names_the_flag(bad: str) -> None:
    with pytest.raises(click.BadParameter) as info:
        check_master(bad)
    assert info.value.param_hint == "--master"


def test_master_without_kubeconfig_is_a_bare_connection() -> None:
    cluster = with_master(None, "https://10.0.0.1:6443")
    assert (cluster.server, cluster.source) == ("https://10.0.0.1:6443", "--master")
    assert cluster.ssl_context is not None


@pytest.mark.parametrize(("options", "message"), [
    pytest.param(ServingOptions(secure_port=70000), "--secure-port 70000 must be between 0 and 65535", id="port"),
    pytest.param(ServingOptions(secure_port=-1), "--secure-port -1", id="negative-port"),
    pytest.param(ServingOptions(bind_address="example.com"), "--bind-address 'example.com'", id="bind-not-ip"),
    pytest.param(ServingOptions(tls_cert_file="a.crt"), "--tls-private-key-file must be given", id="half-pair"),
    pytest.param(ServingOptions(authentication_token_webhook_cache_ttl=-1),
                 "--authentication-token-webhook-cache-ttl must not be negative", id="ttl"),
    pytest.param(ServingOptions(authorization_always_allow_paths=("/a*b",)),
                 "--authorization-always-allow-paths: only trailing", id="star"),
])
def test_bad_serving_flags_name_the_flag(options: ServingOptions, message: str) -> None:
    with pytest.raises(OptionsError, match=message.replace("*", r"\*")):
        options.validate()


def test_serving_defaults_are_kube_schedulers() -> None:
    o = ServingOptions().validate()
    assert (o.secure_port, o.bind_address, o.enabled) == (10259, "0.0.0.0", True)
    assert o.authorization_always_allow_paths == ("/healthz", "/readyz", "/livez")
    assert (o.authentication_token_webhook_cache_ttl, o.authorization_webhook_cache_authorized_ttl,
            o.authorization_webhook_cache_unauthorized_ttl) == (10.0, 10.0, 10.0)
    assert not ServingOptions(secure_port=0).validate().enabled
    flags = {"secure_port": 0, "authorization_always_allow_paths": (), "leader_elect": None}
    assert from_flags(flags).authorization_always_allow_paths == ()
    assert flags == {"leader_elect": None}  # the serving flags are taken, the others left


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", *args])
    return result.exit_code, result.output


def test_version_prints_and_exits() -> None:
    code, out = _run("--version")
    assert code == 0
    assert out.startswith("kubesched ")


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--secure-port=70000"], "--secure-port 70000", id="secure-port"),
    pytest.param(["--bind-address=nowhere"], "--bind-address 'nowhere'", id="bind-address"),
    pytest.param(["--v=-1"], "--v", id="v-negative"),
    pytest.param(["--logging-format=xml"], "'xml' is not one of 'text', 'json'", id="logging-format"),
    pytest.param(["--kube-api-burst=-3"], "--kube-api-burst", id="burst"),
    pytest.param(["--authorization-webhook-cache-authorized-ttl=soon"], "expected a duration", id="duration"),
])
def test_bad_flags_stop_before_anything_runs(args: list[str], message: str) -> None:
    code, out = _run(*args)
    assert code == 2, out
    assert message in out


def test_write_config_to_writes_what_runs_and_exits(tmp_path: Path) -> None:
    out = tmp_path / "effective.yaml"
    code, text = _run(f"--config={ROOT / 'devtools' / 'examples' / 'config' / 'seed.yaml'}", f"--write-config-to={out}",
                      "--leader-elect-resource-name=other")
    assert code == 0, text
    written = loads(out.read_text())
    expected = load(str(ROOT / "devtools" / "examples" / "config" / "seed.yaml"))
    assert written.profiles == expected.profiles
    assert written.leader_election.resource_name == "other"
    assert loads(dumps(written)) == written
    code, text = _run(f"--write-config-to={tmp_path / 'qps.yaml'}", "--kube-api-qps=300", "--kube-api-burst=600")
    assert code == 0, text
    cc = loads((tmp_path / "qps.yaml").read_text()).client_connection
    assert (cc.qps, cc.burst) == (300.0, 600)


# What kube-scheduler v1.37.2 itself writes with --write-config-to and no --config.
KUBE_SCHEDULER_DUMP = Path(__file__).parent / "testdata" / "kube-scheduler-v1.37.2-write-config-to.yaml"
# Its fields kubesched has no equivalent of (reported, not refused, when a config sets them).
KUBE_SCHEDULER_ONLY = ("parallelism",)


def test_write_config_to_runs_kube_schedulers_default_profile(tmp_path: Path) -> None:
    """kube-scheduler writes its default profile as one multiPoint list; kubesched writes every
    extension point expanded. Read back, both are the same profile: kube-scheduler's list is
    kubesched's, and every plugin of it is one kubesched runs (in kube-scheduler's order, its own
    CronJobPool and UnsupportedPodFields added)."""
    reference = yaml.safe_load(KUBE_SCHEDULER_DUMP.read_text())
    multi_point = reference["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    assert [(p["name"], p["weight"]) for p in multi_point] == [(n, w or 0) for n, w in KUBE_SCHEDULER_DEFAULT_PLUGINS]
    theirs = loads(KUBE_SCHEDULER_DUMP.read_text())
    assert theirs.unimplemented == KUBE_SCHEDULER_ONLY  # no plugin among them
    out = tmp_path / "effective.yaml"
    code, text = _run(f"--write-config-to={out}")
    assert code == 0, text
    ours = loads(out.read_text())
    assert ours.profiles[0].plugins == theirs.profiles[0].plugins
    # DynamicResourcesArgs included: filterTimeout 10s, bindingTimeout 10m0s, written as kube-scheduler does.
    assert theirs.profiles[0].plugin_args == ours.profiles[0].plugin_args
    for field in ("percentage_of_nodes_to_score", "pod_initial_backoff_seconds", "pod_max_backoff_seconds"):
        assert getattr(ours, field) == getattr(theirs, field), field
    ours_le, theirs_le = ours.leader_election, theirs.leader_election
    assert (ours_le.lease_duration_seconds, ours_le.renew_deadline_seconds, ours_le.retry_period_seconds,
            ours_le.resource_lock, ours_le.resource_namespace) == (
        theirs_le.lease_duration_seconds, theirs_le.renew_deadline_seconds, theirs_le.retry_period_seconds,
        theirs_le.resource_lock, theirs_le.resource_namespace)
    assert (ours.client_connection.qps, ours.client_connection.burst) == (
        theirs.client_connection.qps, theirs.client_connection.burst)
