"""Several PostFilter plugins that each say Unschedulable: kube-scheduler v1.37.2's
RunPostFilterPlugins (framework/runtime/framework.go) gathers every plugin's reasons into one
Unschedulable status naming the first of them, whose Message() joins the reasons with ", "
(kube-scheduler/framework interface.go); schedulingAlgorithm appends that to the FitError's text."""

from __future__ import annotations

import pytest

from kubesched.config.types import PluginRef, ProfileConfig
from kubesched.framework import CycleState, PodInfo, Status
from kubesched.framework.fit_error import Diagnosis, FitError
from kubesched.framework.runtime.framework import run_post_filter
from kubesched.framework.runtime.profile import build_profile
from kubesched.framework.status import Code
from tests.builders import make_pod
from tests.unit.framework.test_framework_runtime import Preempt

POD = PodInfo(make_pod("p").obj())
U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE
FILTERS = "0/1 nodes are available: 1 Insufficient cpu."


@pytest.mark.parametrize(("answers", "code", "plugin", "message"), [
    pytest.param([Status(U, "first"), Status(U, "second")], U, "p0", f"{FILTERS} first, second",
                 id="two-plugins-joined-with-comma"),
    pytest.param([Status(U, "x", "y")], U, "p0", f"{FILTERS} x, y", id="one-plugin-two-reasons"),
    pytest.param([Status(U, "a"), Status(U, "b", "c"), Status(U, "d")], U, "p0", f"{FILTERS} a, b, c, d",
                 id="three-plugins"),
    # An unresolvable verdict ends the run with its own status and message only.
    pytest.param([Status(U, "a"), Status(UU, "stop")], UU, "p1", f"{FILTERS} stop", id="unresolvable-ends"),
])
def test_post_filter_reasons(answers: list[Status], code: Code, plugin: str, message: str) -> None:
    plugins = {f"p{i}": Preempt(f"p{i}", s) for i, s in enumerate(answers)}
    config = ProfileConfig("test", {"postFilter": tuple(PluginRef(n) for n in plugins)})
    profile = build_profile(config, {n: (lambda args, pl=pl: pl) for n, pl in plugins.items()})
    fit = FitError(POD, 1, Diagnosis(node_to_status={"n1": Status(Code.UNSCHEDULABLE, "Insufficient cpu")}))
    status = run_post_filter(profile, CycleState(), POD, fit)
    assert status is not None
    assert (status.code, status.plugin) == (code, plugin)
    assert fit.message() == message
