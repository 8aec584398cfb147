"""Filters on one node with the pods nominated to it (kube-scheduler framework.go
RunFilterPluginsWithNominatedPods, addGENominatedPods, RunPreFilterExtensionAddPod/RemovePod).

A pod nominated to a node by preemption has no room there yet; a pod of lower or equal priority
must not take the room its victims free. So when a node has nominated pods of equal or higher
priority (other than the pod itself), the filters run twice: on a copy of the node info and of the
cycle state with those pods added (through the PreFilter plugins' `add_pod` extensions), then, if
that passes, as the node really is, because a filter such as pod affinity may pass only with them.

The nominator is a port (the scheduling queue keeps the nominations); without nominations the
scheduling cycle never calls into this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.handle import Nominator
from kubesched.framework.interface import PreFilterPlugin
from kubesched.framework.runtime.profile import Profile
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo


def yielded_to(nominator: Nominator, node: str, pod: PodInfo) -> list[PodInfo]:
    """The pods nominated to `node` that `pod` must make room for: equal or higher priority, not itself."""
    found = nominator.nominated_pods_for_node(node)
    if not found:
        return []
    prio = pod.pod.spec.priority
    uid = pod.pod.metadata.uid
    return [pi for pi in found if pi.pod.spec.priority >= prio and pi.pod.metadata.uid != uid]


# (id of a profile's PreFilter tuple, method) -> (that tuple, its plugins with the method): every
# node with nominated pods asks, every cycle, and most plugins have neither extension.
_EXTENSIONS: dict[tuple[int, str], tuple[tuple[PreFilterPlugin, ...], tuple[tuple[PreFilterPlugin, Any], ...]]] = {}


def _extensions(plugins: tuple[PreFilterPlugin, ...], method: str) -> tuple[tuple[PreFilterPlugin, Any], ...]:
    found = _EXTENSIONS.get((id(plugins), method))
    if found is None or found[0] is not plugins:
        if len(_EXTENSIONS) >= 64:
            _EXTENSIONS.clear()  # profiles built again and again (tests, reconfiguration)
        exts = tuple((pl, ext) for pl in plugins if callable(ext := getattr(pl, method, None)))
        found = _EXTENSIONS[id(plugins), method] = (plugins, exts)
    return found[1]


def run_extension(profile: Profile, state: CycleState, method: str, pod: PodInfo, other: PodInfo,
                  node: NodeInfo) -> Status | None:
    """RunPreFilterExtensionAddPod ("add_pod") / RemovePod ("remove_pod") over the PreFilter plugins
    that have the extension and did not skip; None, or an error status naming the plugin."""
    for pl, ext in _extensions(profile.pre_filter, method):
        if pl.name in state.skip_filter_plugins:
            continue
        s = ext(state, pod, other, node)
        if s is not None and s.code != Code.SUCCESS:
            op = "AddPod" if method == "add_pod" else "RemovePod"
            return Status(Code.ERROR, f'running {op} on PreFilter plugin "{pl.name}": {s.message()}',
                          plugin=pl.name)
    return None


def run_filters(profile: Profile, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
    """RunFilterPlugins on one node: None when it fits, else the first rejection (tagged with its
    plugin) or an error."""
    for pl in profile.filter:
        if pl.name in state.skip_filter_plugins:
            continue
        s = pl.filter(state, pod, node)
        if s is None or s.code == Code.SUCCESS:
            continue
        if s.is_rejected():
            return s.with_plugin(pl.name)
        return Status(Code.ERROR, f'running "{pl.name}" filter plugin: {s.message()}', plugin=pl.name)
    return None


def with_nominated_pods(profile: Profile, state: CycleState, pod: PodInfo, node: NodeInfo,
                        nominated: Sequence[PodInfo]) -> tuple[CycleState, NodeInfo] | Status:
    """addGENominatedPods: copies of the state and node with `nominated` added, or an error."""
    node_out = node.clone()
    state_out = state.clone()
    for pi in nominated:
        node_out.add_pod(pi)
        s = run_extension(profile, state_out, "add_pod", pod, pi, node_out)
        if s is not None:
            return s
    return state_out, node_out


def first_pass(profile: Profile, state: CycleState, pod: PodInfo, node: NodeInfo,
               nominated: Sequence[PodInfo]) -> Status | None:
    """The filters with `nominated` added: None when they pass (the second pass, without them, is
    the caller's), else the rejection or error."""
    if not nominated:
        return None
    added = with_nominated_pods(profile, state, pod, node, nominated)
    if isinstance(added, Status):
        return added
    return run_filters(profile, added[0], pod, added[1])


def run_filters_with_nominated_pods(profile: Profile, state: CycleState, pod: PodInfo, node: NodeInfo,
                                    nominated: Sequence[PodInfo]) -> Status | None:
    """RunFilterPluginsWithNominatedPods, given the pods nominated to the node that the pod yields to."""
    s = first_pass(profile, state, pod, node, nominated)
    if s is not None:
        return s
    return run_filters(profile, state, pod, node)
