"""kube-scheduler's "feature gate" flags for `kubesched run`: --feature-gates (parsed and checked
by kubesched.config.features), --emulated-version and --min-compatibility-version (kubesched is
kube-scheduler v1.37.2 at its own version only)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from kubesched.config.features import FeatureGateError, FeatureGates, parse_feature_gates

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("kubesched")
# kube-scheduler v1.37.2's binary version, and the min compatibility version it defaults to (one below)
BINARY_VERSION, MIN_COMPATIBILITY_VERSION = "1.37", "1.36"
FLAG_NAMES = ("feature_gates", "emulated_version", "min_compatibility_version")


def feature_gate_options(f: F) -> F:
    options = [
        click.option("--feature-gates", multiple=True, metavar="NAME=BOOL,...",
                     help="kube-scheduler's feature gates (repeatable; comma-separated, optionally kube:NAME=BOOL). "
                          "Gates its scheduling consults are accepted at the values kubesched implements, every "
                          "other gate kube-scheduler knows is accepted and changes nothing here, unknown names are "
                          "refused as kube-scheduler refuses them; docs/running.md lists them."),
        click.option("--emulated-version", multiple=True, metavar="[kube=]1.37",
                     help=f"Accepted as {BINARY_VERSION} only: kubesched emulates kube-scheduler v{BINARY_VERSION}."),
        click.option("--min-compatibility-version", multiple=True, metavar="[kube=]1.36",
                     help=f"Accepted as {MIN_COMPATIBILITY_VERSION} only (kube-scheduler's default): the "
                          "gates' defaults are those it implies."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def _versions(flag: str, values: Sequence[str], only: str) -> None:
    """StringSlice values of [component=]major.minor; kubesched takes kube's `only` alone."""
    for value in values:
        for item in value.split(","):
            component, sep, version = item.partition("=")
            component, version = (component.strip(), version.strip()) if sep else ("kube", item.strip())
            if version.count(".") == 2 and version.endswith(".0"):  # a zero patch is allowed upstream
                version = version[:-2]
            if component != "kube":
                raise click.BadParameter(f"component not registered: {component}", param_hint=flag)
            if version != only:
                raise click.BadParameter(f"{version!r}: kubesched behaves as kube-scheduler v1.37.2 with "
                                         f"{flag}={only} only", param_hint=flag)


def gates_from_flags(flags: dict[str, Any]) -> FeatureGates:
    """The gates from the flags above (popped from `flags`), with kube-scheduler's warnings and
    kubesched's own logged; click.BadParameter for what kube-scheduler or kubesched refuses."""
    values = {name: flags.pop(name, ()) for name in FLAG_NAMES}
    _versions("--emulated-version", values["emulated_version"], BINARY_VERSION)
    _versions("--min-compatibility-version", values["min_compatibility_version"], MIN_COMPATIBILITY_VERSION)
    try:
        gates, warnings = parse_feature_gates(values["feature_gates"])
    except FeatureGateError as exc:
        raise click.BadParameter(str(exc), param_hint="--feature-gates") from None
    unsupported = gates.unsupported()
    if unsupported:
        raise click.BadParameter("kubesched does not implement " + ", ".join(unsupported) + ": it would schedule "
                                 "otherwise than kube-scheduler (docs/running.md lists the gates and what kubesched "
                                 "does with each)", param_hint="--feature-gates")
    for warning in warnings:
        log.warning(warning.message, extra={"featureGate": warning.gate, "value": warning.value})
    without_effect = gates.without_effect()
    if without_effect:
        log.warning("these feature gates change nothing in kubesched (kube-scheduler's scheduling does not "
                    "consult them): " + ", ".join(without_effect))
    return gates
