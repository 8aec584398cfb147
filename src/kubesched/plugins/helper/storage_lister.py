"""The storage objects the volume plugins read, from the scheduler's informers (never an API call
per pod), as kube-scheduler's plugins read their listers: PersistentVolumes, PersistentVolumeClaims,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities and VolumeAttachments.

The plugins get a `StorageLister` through their factory (the lead wires `InformerStorage` over the
informers of kubesched.scheduler.sources); tests and `explain` on recorded objects use `StaticStorage`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from kubesched.model.objects import ObjectMeta
from kubesched.model.storage import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    VolumeAttachment,
)


class _HasMeta(Protocol):
    @property
    def metadata(self) -> ObjectMeta: ...


M = TypeVar("M", bound=_HasMeta)
T_co = TypeVar("T_co", covariant=True)


class StorageLister(Protocol):
    def persistent_volume(self, name: str) -> PersistentVolume | None: ...
    def persistent_volumes(self) -> Iterable[PersistentVolume]: ...
    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None: ...
    def storage_class(self, name: str) -> StorageClass | None: ...
    def storage_classes(self) -> Iterable[StorageClass]: ...
    def csi_node(self, name: str) -> CSINode | None: ...
    def all_csi_nodes(self) -> Iterable[CSINode]: ...
    def csi_driver(self, name: str) -> CSIDriver | None: ...
    def storage_capacities(self) -> Iterable[CSIStorageCapacity]: ...
    def volume_attachments(self) -> Iterable[VolumeAttachment]: ...


class Store(Protocol[T_co]):
    """What an informer offers: objects by key ("namespace/name", or "name" when cluster-scoped)."""

    def get(self, key: str) -> T_co | None: ...
    def values(self) -> Iterable[T_co]: ...


class InformerStorage:
    """A StorageLister over informers' stores, read at each call, so a re-list that replaces a
    store is seen at once."""

    __slots__ = ("_attachments", "_capacities", "_claims", "_classes", "_csi_drivers", "_csi_nodes", "_volumes")

    def __init__(self, volumes: Store[PersistentVolume], claims: Store[PersistentVolumeClaim],
                 classes: Store[StorageClass], csi_nodes: Store[CSINode], csi_drivers: Store[CSIDriver],
                 capacities: Store[CSIStorageCapacity], attachments: Store[VolumeAttachment]) -> None:
        self._volumes = volumes
        self._claims = claims
        self._classes = classes
        self._csi_nodes = csi_nodes
        self._csi_drivers = csi_drivers
        self._capacities = capacities
        self._attachments = attachments

    def persistent_volume(self, name: str) -> PersistentVolume | None:
        return self._volumes.get(name)

    def persistent_volumes(self) -> Iterable[PersistentVolume]:
        return self._volumes.values()

    def claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self._claims.get(f"{namespace}/{name}")

    def storage_class(self, name: str) -> StorageClass | None:
        return self._classes.get(name)

    def storage_classes(self) -> Iterable[StorageClass]:
        return self._classes.values()

    def csi_node(self, name: str) -> CSINode | None:
        return self._csi_nodes.get(name)

    def all_csi_nodes(self) -> Iterable[CSINode]:
        return self._csi_nodes.values()

    def csi_driver(self, name: str) -> CSIDriver | None:
        return self._csi_drivers.get(name)

    def storage_capacities(self) -> Iterable[CSIStorageCapacity]:
        return self._capacities.values()

    def volume_attachments(self) -> Iterable[VolumeAttachment]:
        return self._attachments.values()


def _by_key(objs: Iterable[M]) -> dict[str, M]:
    """Keyed as an informer keys them: "namespace/name", or "name" when cluster-scoped."""
    return {f"{o.metadata.namespace}/{o.metadata.name}" if o.metadata.namespace else o.metadata.name: o
            for o in objs}


class StaticStorage(InformerStorage):
    """Fixed storage objects (tests, `explain` on recorded objects). The dicts are public so a test
    can change them between cycles, as an informer event would."""

    __slots__ = ("attachments", "capacities", "claims", "classes", "csi_drivers", "csi_nodes", "volumes")

    def __init__(self, volumes: Iterable[PersistentVolume] = (), claims: Iterable[PersistentVolumeClaim] = (),
                 classes: Iterable[StorageClass] = (), csi_nodes: Iterable[CSINode] = (),
                 csi_drivers: Iterable[CSIDriver] = (), capacities: Iterable[CSIStorageCapacity] = (),
                 attachments: Iterable[VolumeAttachment] = ()) -> None:
        self.volumes = _by_key(volumes)
        self.claims = _by_key(claims)
        self.classes = _by_key(classes)
        self.csi_nodes = _by_key(csi_nodes)
        self.csi_drivers = _by_key(csi_drivers)
        self.capacities = _by_key(capacities)
        self.attachments = _by_key(attachments)
        # A dict is a Store: get(key) and values().
        super().__init__(self.volumes, self.claims, self.classes, self.csi_nodes, self.csi_drivers,
                         self.capacities, self.attachments)


# What client-go's listers answer for a missing object (apierrors.NewNotFound: the resource, with its
# group when it has one, then the quoted name); the volume plugins return it as their reason.
def claim_not_found(name: str) -> str:
    return f'persistentvolumeclaim "{name}" not found'


def volume_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def no_storage() -> StaticStorage:
    """No storage object at all: what a plugin sees when it is built without informers."""
    return StaticStorage()
