"""kube-scheduler v1.37.2's flags on `kubesched run`, one table per group: each parses with
kube-scheduler's syntax and defaults, each refusal names the flag (and, for feature gates, says what
kube-scheduler says), and none is unknown to `kubesched run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from kubesched.cmd.main import main
from kubesched.cmd.run import run
from tests.unit.cmd.kube_scheduler_flags import KUBE_SCHEDULER_FLAGS


def _params(*args: str) -> dict[str, Any]:
    return run.make_context("run", list(args)).params


def _refused(*args: str) -> str:
    with pytest.raises(click.UsageError) as info:
        run.make_context("run", list(args))
    return info.value.format_message()


def test_every_kube_scheduler_flag_is_known() -> None:
    """Accepted, or refused by name: none is "No such option"."""
    # -h/--help come from the group's help_option_names; click caches a command's help option from
    # the first context it is made in, so which of them `run` lists depends on the tests before.
    assert main.context_settings["help_option_names"] == ["-h", "--help"]
    known = {opt for p in run.params for opt in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
    assert sorted(set(KUBE_SCHEDULER_FLAGS) - known) == []


@pytest.mark.parametrize(("args", "param", "value"), [
    pytest.param([], "verbosity", None, id="v-unset"),
    pytest.param(["-v", "2"], "verbosity", 2, id="v-space"),
    pytest.param(["-v=2"], "verbosity", 2, id="v-equals"),
    pytest.param(["-v4"], "verbosity", 4, id="v-attached"),
    pytest.param(["--v=5"], "verbosity", 5, id="long-v"),
    pytest.param(["--v", "3"], "verbosity", 3, id="long-v-space"),
    pytest.param(["--logging-format=json"], "logging_format", "json", id="logging-format"),
    pytest.param(["--log-format=json"], "log_format", "json", id="log-format-deprecated-alias"),
    pytest.param([], "profiling", None, id="profiling-unset"),
    pytest.param(["--profiling"], "profiling", True, id="profiling-alone"),
    pytest.param(["--profiling=false"], "profiling", False, id="profiling-false"),
    pytest.param(["--profiling=true"], "profiling", True, id="profiling-true"),
    pytest.param(["--contention-profiling=false"], "contention_profiling", False, id="contention-profiling"),
    pytest.param(["--kube-api-content-type=application/json"], "kube_api_content_type", "application/json",
                 id="content-type"),
    pytest.param(["--kube-api-qps=20.5"], "kube_api_qps", 20.5, id="qps"),
    pytest.param(["--kube-api-burst=7"], "kube_api_burst", 7, id="burst"),
    pytest.param([], "pod_max_in_unschedulable_pods_duration", 300.0, id="pod-max-default-5m"),
    pytest.param(["--pod-max-in-unschedulable-pods-duration=1m30s"], "pod_max_in_unschedulable_pods_duration",
                 90.0, id="pod-max"),
    pytest.param(["--feature-gates=A=true,B=false", "--feature-gates", "C=true"], "feature_gates",
                 ("A=true,B=false", "C=true"), id="feature-gates-repeated"),
    pytest.param(["--emulated-version=1.37"], "emulated_version", ("1.37",), id="emulated-version"),
])
def test_parses(args: list[str], param: str, value: Any) -> None:
    assert _params(*args)[param] == value


@pytest.mark.parametrize("args", [
    pytest.param(["--log-flush-frequency=10s"], id="log-flush-frequency"),
    # refused flags given at kube-scheduler's default change nothing, so they are accepted
    pytest.param(["--log-text-split-stream=false"], id="split-stream-false"),
    pytest.param(["--log-json-info-buffer-size=0"], id="buffer-size-zero"),
    pytest.param(["--tls-min-version=VersionTLS12"], id="tls-min-version-1.2"),
    pytest.param(["--requestheader-username-headers=x-remote-user"], id="requestheader-default"),
    pytest.param(["--permit-port-sharing=false"], id="permit-port-sharing-false"),
    pytest.param(["--disabled-metrics="], id="disabled-metrics-empty"),
    pytest.param(["--disable-http2-serving"], id="http2-off-as-kubesched"),
    pytest.param(["--http2-max-streams-per-connection=100"], id="http2-streams"),
    pytest.param(["--permit-address-sharing=true"], id="reuse-address"),
])
def test_accepted(args: list[str]) -> None:
    _params(*args)


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["-v=x"], "'=x': expected a number, 0 or more", id="v-not-a-number"),
    pytest.param(["--v=-1"], "'-1': expected a number", id="v-negative"),
    pytest.param(["--profiling=maybe"], "--profiling", id="profiling-not-bool"),
    pytest.param(["--pod-max-in-unschedulable-pods-duration=soon"], "expected a duration", id="pod-max"),
    pytest.param(["--log-flush-frequency=often"], "expected a duration", id="log-flush-frequency"),
    pytest.param(["--tls-cipher-suites=TLS_AES_128_GCM_SHA256"],
                 "kubesched does not support --tls-cipher-suites=TLS_AES_128_GCM_SHA256: kubesched offers OpenSSL's",
                 id="tls-cipher-suites"),
    pytest.param(["--tls-min-version=VersionTLS13"], "kubesched does not support --tls-min-version=VersionTLS13",
                 id="tls-min-version-1.3"),
    pytest.param(["--tls-sni-cert-key=a.crt,a.key"], "--tls-sni-cert-key", id="sni"),
    pytest.param(["--permit-port-sharing"], "kubesched does not support --permit-port-sharing=true", id="bool-alone"),
    pytest.param(["--log-json-split-stream=true"], "--log-json-split-stream=true", id="split-stream"),
    pytest.param(["--vmodule=sched*=4"], "kubesched does not support --vmodule=sched*=4", id="vmodule"),
    pytest.param(["--requestheader-client-ca-file=ca.crt"], "front-proxy request headers", id="requestheader"),
    pytest.param(["--disabled-metrics=scheduler_pending_pods"], "--disabled-metrics", id="disabled-metrics"),
    pytest.param(["--show-hidden-metrics-for-version=1.36"], "--show-hidden-metrics-for-version", id="hidden"),
    pytest.param(["--allow-metric-labels=a,b"], "--allow-metric-labels", id="allow-metric-labels"),
])
def test_refused_by_name(args: list[str], message: str) -> None:
    assert message in _refused(*args)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["run", *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--feature-gates=Foo=true"], "--feature-gates: unrecognized feature gate: Foo", id="unknown-gate"),
    pytest.param(["--feature-gates=DynamicResourceAllocation=false"],
                 "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true", id="locked"),
    pytest.param(["--feature-gates=GenericWorkload=true,PodGroupPreemptionPolicy=true"],
                 "kubesched does not implement PodGroupPreemptionPolicy=true (kube-scheduler v1.37.2's default: false)",
                 id="pod-group-preemption-policy"),
    pytest.param(["--feature-gates=SchedulerAsyncPreemption=false"],
                 "kubesched does not implement SchedulerAsyncPreemption=false", id="scheduler-gate-off-default"),
    pytest.param(["--emulated-version=1.36"], "kubesched behaves as kube-scheduler v1.37.2 with "
                 "--emulated-version=1.37 only", id="emulated-version"),
    pytest.param(["--min-compatibility-version=kube=1.37"], "--min-compatibility-version=1.36 only",
                 id="min-compatibility-version"),
    pytest.param(["--emulated-version=wardle=1.2"], "component not registered: wardle", id="emulated-component"),
    pytest.param(["--kube-api-content-type=application/cbor"],
                 "expected application/vnd.kubernetes.protobuf (kube-scheduler's default) or application/json",
                 id="content-type"),
])
def test_refused_at_start(args: list[str], message: str, tmp_path: Path) -> None:
    code, out = _invoke(*args, f"--write-config-to={tmp_path / 'c.yaml'}")
    assert code == 2, out
    assert message in " ".join(out.split())
    assert not (tmp_path / "c.yaml").exists()


@pytest.mark.parametrize(("args", "fields"), [
    pytest.param([], {"enableProfiling": True, "enableContentionProfiling": True,
                      "contentType": "application/vnd.kubernetes.protobuf"}, id="defaults"),
    pytest.param(["--profiling=false", "--contention-profiling=false"],
                 {"enableProfiling": False, "enableContentionProfiling": False}, id="profiling-off"),
    pytest.param(["--kube-api-content-type=application/vnd.kubernetes.protobuf"],
                 {"contentType": "application/vnd.kubernetes.protobuf"}, id="protobuf"),
    pytest.param(["--kube-api-content-type=application/json"], {"contentType": "application/json"}, id="json"),
    pytest.param(["--feature-gates=SchedulerPopFromBackoffQ=false,ComponentFlagz=false", "--emulated-version=kube=1.37",
                  "--min-compatibility-version=1.36.0"], {}, id="gates-kubesched-implements"),
])
def test_applied_without_config(args: list[str], fields: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "c.yaml"
    code, text = _invoke(*args, f"--write-config-to={out}")
    assert code == 0, text
    doc = yaml.safe_load(out.read_text())
    flat = {**doc, **doc["clientConnection"]}
    assert {k: flat[k] for k in fields} == fields


def test_deprecated_flags_are_ignored_with_config(tmp_path: Path) -> None:
    config = tmp_path / "sched.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "enableProfiling: true\n")
    out = tmp_path / "c.yaml"
    code, text = _invoke(f"--config={config}", "--profiling=false", "--kube-api-content-type=application/json",
                         f"--write-config-to={out}")
    assert code == 0, text
    assert yaml.safe_load(out.read_text())["enableProfiling"] is True
    assert "these flags are ignored, as kube-scheduler does: --kube-api-content-type, --profiling" in text


def test_log_format_warns_that_it_is_deprecated(tmp_path: Path) -> None:
    code, text = _invoke("--log-format=text", f"--write-config-to={tmp_path / 'c.yaml'}")
    assert code == 0, text
    assert "--log-format is deprecated: use kube-scheduler's --logging-format" in text


def test_help_is_kube_schedulers_short_and_long() -> None:
    assert _invoke("-h")[0] == 0
    assert _invoke("--help")[0] == 0


@pytest.mark.parametrize(("args", "gang"), [
    pytest.param([], False, id="gate-off"),
    pytest.param(["--feature-gates=GenericWorkload=true"], True, id="gate-on"),
])
def test_generic_workload_adds_gang_scheduling_to_the_default_profile(args: list[str], gang: bool,
                                                                      tmp_path: Path) -> None:
    code, out = _invoke(*args, f"--write-config-to={tmp_path / 'c.yaml'}")
    assert code == 0, out
    assert ("GangScheduling" in (tmp_path / "c.yaml").read_text()) is gang
