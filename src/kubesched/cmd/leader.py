"""kube-scheduler's --leader-elect* flags for `kubesched run`, and the elector they configure.

The flags override the config file's leaderElection, field by field, only when given (as
kube-scheduler's ApplyLeaderElectionTo), so none of them has a default here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import click

from kubesched.api import ApiClient
from kubesched.api.leaderelection import LeaderElector, Timing, new_identity
from kubesched.api.lease import ApiLeaseLock
from kubesched.cmd.params import Duration
from kubesched.config.load import DEFAULT_SOURCE, override_leader_election
from kubesched.config.types import LeaderElection, SchedulerConfig

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("kubesched")
KUBE_SCHEDULER_LEASE = ("kube-system", "kube-scheduler")

# flag -> LeaderElection field
FLAG_FIELDS = {
    "leader_elect": "leader_elect",
    "leader_elect_lease_duration": "lease_duration_seconds",
    "leader_elect_renew_deadline": "renew_deadline_seconds",
    "leader_elect_retry_period": "retry_period_seconds",
    "leader_elect_resource_lock": "resource_lock",
    "leader_elect_resource_name": "resource_name",
    "leader_elect_resource_namespace": "resource_namespace",
}


def leader_election_options(f: F) -> F:
    """The seven flags, in kube-scheduler's spelling; `--leader-elect` alone means true and
    `--leader-elect=false` turns election off."""
    options = [
        click.option("--leader-elect", type=click.BOOL, default=None, is_flag=False, flag_value=True,
                     metavar="[=BOOL]",
                     help="Run only while holding the leader lease, so replicas can stand by (default: "
                          "leaderElection.leaderElect of --config, true)."),
        click.option("--leader-elect-lease-duration", type=Duration(), default=None, metavar="DURATION",
                     help="How long standbys wait after the last renewal they saw before taking over (15s)."),
        click.option("--leader-elect-renew-deadline", type=Duration(), default=None, metavar="DURATION",
                     help="How long the leader retries renewing before it stops leading and exits (10s)."),
        click.option("--leader-elect-retry-period", type=Duration(), default=None, metavar="DURATION",
                     help="How often candidates try to acquire or renew the lease (2s)."),
        click.option("--leader-elect-resource-lock", default=None, metavar="KIND",
                     help='The lock\'s kind; only "leases" (coordination.k8s.io/v1), as kube-scheduler.'),
        click.option("--leader-elect-resource-name", default=None, metavar="NAME",
                     help="The Lease's name (kubesched; never kube-scheduler's own lease)."),
        click.option("--leader-elect-resource-namespace", default=None, metavar="NAMESPACE",
                     help="The Lease's namespace (kube-system)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def apply_flags(config: SchedulerConfig, config_path: str | None, flags: dict[str, Any]) -> SchedulerConfig:
    """`config` with the given flags over its leaderElection; raises ConfigError."""
    given = {FLAG_FIELDS[k]: v for k, v in flags.items() if k in FLAG_FIELDS}
    return override_leader_election(config, f"{config_path or DEFAULT_SOURCE} with the --leader-elect flags",
                                    **given)


def elector_for(client: ApiClient, le: LeaderElection) -> LeaderElector | None:
    if not le.leader_elect:
        return None
    if (le.resource_namespace, le.resource_name) == KUBE_SCHEDULER_LEASE:
        # A kube-scheduler config used unchanged names kube-scheduler's own lease: sharing it would
        # leave one of the two schedulers idle, whichever loses.
        log.warning("leader election uses kube-scheduler's own lease kube-system/kube-scheduler: kubesched "
                    "and kube-scheduler will take turns instead of both running; set "
                    "--leader-elect-resource-name=kubesched to run beside it")
    lock = ApiLeaseLock(client, le.resource_namespace, le.resource_name)
    timing = Timing(le.lease_duration_seconds, le.renew_deadline_seconds, le.retry_period_seconds)
    return LeaderElector(lock, new_identity(), timing)
