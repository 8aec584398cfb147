"""leaderElection in the file and the --leader-elect* flags over it: defaults, overrides, validation."""

from __future__ import annotations

from typing import Any

import click
import pytest
from click.testing import CliRunner

from kubesched.cmd.leader import apply_flags, leader_election_options
from kubesched.config.load import format_duration, loads
from kubesched.config.types import LeaderElection
from kubesched.framework.field_errors import ConfigError

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def test_defaults_are_kube_schedulers_but_the_lock_is_kubescheds_own() -> None:
    le = loads(HEAD).leader_election
    assert le == LeaderElection(True, 15.0, 10.0, 2.0, "leases", "kubesched", "kube-system")


def parsed(*argv: str) -> dict[str, Any]:
    """What the flags parse to, through a command that only has them."""
    seen: dict[str, Any] = {}

    @click.command()
    @leader_election_options
    def cmd(**flags: Any) -> None:
        seen.update(flags)

    result = CliRunner().invoke(cmd, list(argv))
    assert result.exit_code == 0, result.output
    return {k: v for k, v in seen.items() if v is not None}


FLAG_CASES = [
    pytest.param([], {}, id="none-given"),
    pytest.param(["--leader-elect=false"], {"leader_elect": False}, id="leader-elect-equals-false"),
    pytest.param(["--leader-elect"], {"leader_elect": True}, id="bare-leader-elect"),
    pytest.param(["--leader-elect=true"], {"leader_elect": True}, id="leader-elect-equals-true"),
    pytest.param(["--leader-elect-lease-duration=4s", "--leader-elect-renew-deadline=3s",
                  "--leader-elect-retry-period=1s"],
                 {"leader_elect_lease_duration": 4.0, "leader_elect_renew_deadline": 3.0,
                  "leader_elect_retry_period": 1.0}, id="durations"),
    pytest.param(["--leader-elect-lease-duration", "1m30s"], {"leader_elect_lease_duration": 90.0},
                 id="duration-as-next-argument"),
    pytest.param(["--leader-elect-resource-name=le-a", "--leader-elect-resource-namespace=ns",
                  "--leader-elect-resource-lock=leases"],
                 {"leader_elect_resource_name": "le-a", "leader_elect_resource_namespace": "ns",
                  "leader_elect_resource_lock": "leases"}, id="names"),
]


@pytest.mark.parametrize(("argv", "expected"), FLAG_CASES)
def test_flags_parse(argv: list[str], expected: dict[str, Any]) -> None:
    assert parsed(*argv) == expected


def test_a_bad_duration_flag_is_a_usage_error() -> None:
    @click.command()
    @leader_election_options
    def cmd(**flags: Any) -> None: ...

    result = CliRunner().invoke(cmd, ["--leader-elect-retry-period=2 seconds"])
    assert result.exit_code == 2
    assert "expected a duration" in result.output


OVERRIDES = [
    pytest.param("", {}, LeaderElection(), id="nothing-given-keeps-the-file"),
    pytest.param("leaderElection:\n  leaderElect: true\n", {"leader_elect": False},
                 LeaderElection(leader_elect=False), id="flag-turns-election-off"),
    pytest.param("leaderElection:\n  leaseDuration: 30s\n  resourceName: from-file\n",
                 {"leader_elect_resource_name": "from-flag"},
                 LeaderElection(lease_duration_seconds=30.0, resource_name="from-flag"), id="field-by-field"),
    pytest.param("leaderElection:\n  leaseDuration: 30s\n",
                 {"leader_elect_lease_duration": 4.0, "leader_elect_renew_deadline": 3.0,
                  "leader_elect_retry_period": 1.0},
                 LeaderElection(lease_duration_seconds=4.0, renew_deadline_seconds=3.0, retry_period_seconds=1.0),
                 id="short-durations"),
]


@pytest.mark.parametrize(("body", "flags", "expected"), OVERRIDES)
def test_flags_override_the_file(body: str, flags: dict[str, Any], expected: LeaderElection) -> None:
    assert apply_flags(loads(HEAD + body), "sched.yaml", flags).leader_election == expected


INVALID = [
    pytest.param({"leader_elect_lease_duration": 3.0, "leader_elect_renew_deadline": 3.0},
                 'leaderElection.leaseDuration: Invalid value: "3s": must be greater than `renewDeadline`',
                 id="lease-not-longer-than-renew"),
    pytest.param({"leader_elect_renew_deadline": 2.0},
                 'leaderElection.renewDeadline: Invalid value: "2s": must be greater than '
                 "retryPeriod*JitterFactor (2s * 1.2)", id="renew-within-jittered-retry"),
    pytest.param({"leader_elect_resource_lock": "endpointsleases"},
                 'leaderElection.resourceLock: Unsupported value: "endpointsleases": supported values: "leases"',
                 id="resource-lock"),
    pytest.param({"leader_elect_resource_name": ""}, "leaderElection.resourceName: Required value",
                 id="empty-resource-name"),
    pytest.param({"leader_elect_retry_period": -1.0},
                 'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero', id="negative-retry"),
]


@pytest.mark.parametrize(("flags", "message"), INVALID)
def test_invalid_flags_name_the_field(flags: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        apply_flags(loads(HEAD), None, flags)
    assert message in str(info.value)
    assert str(info.value).startswith("<default config> with the --leader-elect flags:")


def test_invalid_durations_are_fine_with_election_off() -> None:
    le = apply_flags(loads(HEAD), None, {"leader_elect": False, "leader_elect_renew_deadline": 30.0}).leader_election
    assert not le.leader_elect


def test_file_renew_deadline_within_jittered_retry_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"leaderElection\.renewDeadline: Invalid value: \"2s\""):
        loads(HEAD + "leaderElection:\n  renewDeadline: 2s\n")


@pytest.mark.parametrize(("seconds", "text"), [
    pytest.param(15.0, "15s", id="seconds"), pytest.param(0.5, "500ms", id="millis"),
    pytest.param(90.0, "1m30s", id="minutes"), pytest.param(3600.0, "1h0m0s", id="hours"),
    pytest.param(0.0, "0s", id="zero"), pytest.param(1.5, "1.5s", id="fraction"),
])
def test_format_duration_as_go(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
