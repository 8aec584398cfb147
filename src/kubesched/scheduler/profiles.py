"""The one place profiles are built: `kubesched run`, `explain`, `simulate` and `shadow` all call
`build_profiles`, so the tools decide with the plugins, args and stores the scheduler itself uses."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable

from kubesched.api.informer import JOBS, NODES, PODS
from kubesched.config.types import ProfileConfig, SchedulerConfig
from kubesched.framework.handle import Handle
from kubesched.framework.registry import PluginSpec
from kubesched.framework.runtime.profile import Profile, ProfileError, build_profile
from kubesched.framework.snapshot import Snapshot
from kubesched.scheduler.sources import Sources, registry_of

FIT = "NodeResourcesFit"


def build_profiles(config: SchedulerConfig, sources: Sources, handle: Handle,
                   out_of_tree: Iterable[PluginSpec] = ()) -> dict[str, Profile]:
    """Every profile of the config by scheduler name, in the config's order: its plugins from the
    in-tree registry over the sources' stores, the out-of-tree plugins merged in, each instantiated
    once with its args and the handle."""
    registry = registry_of(sources, out_of_tree)
    return {p.scheduler_name: build_profile(p, registry, handle) for p in extenders_ignored_resources(config)}


def extenders_ignored_resources(config: SchedulerConfig) -> tuple[ProfileConfig, ...]:
    """The profiles with NodeResourcesFit's ignoredResources replaced by the resources an extender
    manages with ignoredByScheduler, as kube-scheduler's buildExtenders does; a profile that has
    no NodeResourcesFit args then is an error, as there."""
    ignored = [r.name for ext in config.extenders for r in ext.managed_resources if r.ignored_by_scheduler]
    if not ignored:
        return config.profiles
    out: list[ProfileConfig] = []
    for profile in config.profiles:
        args = profile.plugin_args.get(FIT)
        if args is None:
            raise ProfileError("can't find NodeResourcesFitArgs in plugin config")
        out.append(dataclasses.replace(profile, plugin_args={**profile.plugin_args,
                                                             FIT: {**args, "ignoredResources": list(ignored)}}))
    return tuple(out)


def read_only_handle(snapshot: Callable[[], Snapshot], sources: Sources,
                     clock: Callable[[], float] = time.monotonic) -> Handle:
    """The handle of a tool that decides without writing: the snapshot, the clock and the stores'
    listers, and no write port (a plugin that tries to bind or preempt gets the Handle's refusal)."""
    return Handle(snapshot=snapshot, clock=clock, pods=sources.store(PODS.plural),
                  nodes=sources.store(NODES.plural), jobs=sources.store(JOBS.plural))
