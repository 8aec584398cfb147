"""The one place profiles are built: `kubesched run`, `explain`, `simulate` and `shadow` all call
`build_profiles`, so the tools decide with the plugins, args and stores the scheduler itself uses."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from kubesched.api.informer import JOBS, NODES, PODS
from kubesched.config.types import SchedulerConfig
from kubesched.framework.handle import Handle
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile, build_profile
from kubesched.framework.snapshot import Snapshot
from kubesched.scheduler.sources import Sources, registry_of


def build_profiles(config: SchedulerConfig, sources: Sources, handle: Handle,
                   out_of_tree: Iterable[PluginSpec] = ()) -> dict[str, Profile]:
    """Every profile of the config by scheduler name, in the config's order: its plugins from the
    in-tree registry over the sources' stores, the out-of-tree plugins merged in, each instantiated
    once with its args and the handle."""
    registry = registry_of(sources, out_of_tree)
    return {p.scheduler_name: build_profile(p, registry, handle) for p in config.profiles}


def read_only_handle(snapshot: Callable[[], Snapshot], sources: Sources,
                     clock: Callable[[], float] = time.monotonic) -> Handle:
    """The handle of a tool that decides without writing: the snapshot, the clock and the stores'
    listers, and no write port (a plugin that tries to bind or preempt gets the Handle's refusal)."""
    return Handle(snapshot=snapshot, clock=clock, pods=sources.store(PODS.plural),
                  nodes=sources.store(NODES.plural), jobs=sources.store(JOBS.plural))
