"""The volume assume cache (kube-scheduler volumebinding/passive_assume_cache.go): the informer's
PVs and PVCs, with the versions the scheduler has assumed (a PV bound to a claim, a claim given a
selected node) laid over them until the apiserver's next version arrives.

    informer version v1 ──assume(v1')──▶ reads return v1' (same resourceVersion as v1)
          │                                  │ restore(v1')          │ informer brings v2
          ▼                                  ▼                       ▼
    reads return v1 ◀────────────────── assumed dropped ◀──── reads return v2, v1' dropped

An assumed object only shadows the informer's object of the same resourceVersion: once the
informer holds a newer one (our own write, or anyone's), that one wins, as the Go cache's informer
handler makes it win. Here that check is made on read, so no informer handler is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from kubesched.model.objects import ObjectMeta


class _Object(Protocol):
    @property
    def metadata(self) -> ObjectMeta: ...


T = TypeVar("T", bound=_Object)


class AssumeError(Exception):
    pass


class AssumeCache(Generic[T]):
    """Over one informer's objects: `get` by key ("name", or "namespace/name" as `key` makes it),
    `list_all` every object."""

    def __init__(self, get: Callable[[str], T | None], list_all: Callable[[], Iterable[T]],
                 key: Callable[[T], str], resource: str) -> None:
        self._get = get
        self._list = list_all
        self.key = key
        self.resource = resource
        self.assumed: dict[str, T] = {}

    def _current(self, key: str, stored: T) -> T:
        assumed = self.assumed.get(key)
        if assumed is None:
            return stored
        if assumed.metadata.resource_version == stored.metadata.resource_version:
            return assumed
        del self.assumed[key]  # the informer has a newer version: the assumption is over
        return stored

    def get(self, key: str) -> T | None:
        """The assumed version if the informer has nothing newer, else the informer's; None if the
        informer does not have the object (an assumed object alone never counts)."""
        stored = self._get(key)
        if stored is None:
            self.assumed.pop(key, None)
            return None
        return self._current(key, stored)

    def get_api_obj(self, key: str) -> T | None:
        """The informer's version, assumptions ignored."""
        return self._get(key)

    def list(self, keep: Callable[[T], bool] | None = None) -> list[T]:
        """The informer's objects (those `keep` accepts, on the informer's version), each replaced by
        its assumed version where that is current."""
        out: list[T] = []
        assumed = self.assumed
        for obj in self._list():
            if keep is not None and not keep(obj):
                continue
            out.append(self._current(self.key(obj), obj) if assumed else obj)
        return out

    def assume(self, obj: T) -> None:
        """Lay `obj` over the informer's version, which must have the same resourceVersion."""
        key = self.key(obj)
        stored = self._get(key)
        if stored is None:
            raise AssumeError(f'{self.resource} "{key}" not found')
        if stored.metadata.resource_version != obj.metadata.resource_version:
            raise AssumeError(f"{key!r} is out of sync (stored: {stored.metadata.resource_version}, "
                              f"assume: {obj.metadata.resource_version})")
        self.assumed[key] = obj

    def restore(self, obj: T) -> None:
        """Drop the assumption `obj` made, if it still stands (same resourceVersion)."""
        key = self.key(obj)
        assumed = self.assumed.get(key)
        if assumed is not None and assumed.metadata.resource_version == obj.metadata.resource_version:
            del self.assumed[key]

    def restore_all(self, objs: Sequence[T]) -> None:
        for obj in objs:
            self.restore(obj)
