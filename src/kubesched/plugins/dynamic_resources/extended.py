"""Extended resources backed by DRA (DRAExtendedResource, GA in v1.37): a DeviceClass whose
`spec.extendedResourceName` names a resource, or any class through the implicit name
`deviceclass.resource.kubernetes.io/<class>`, lets a pod ask for devices with a plain
`resources.requests` entry. kube-scheduler then leaves that resource to DynamicResources on every
node whose allocatable does not list it, allocating devices for a claim it creates for the pod.

kubesched does not make that claim yet. Placing such a pod by NodeResourcesFit alone would say
"Insufficient <resource>" on nodes where kube-scheduler allocates devices, so PreFilter stops the
pod instead, naming each field, whenever some node would have the resource delegated. Where every
node lists it in allocatable (device plugins), kube-scheduler delegates nothing and neither does
this."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from kubesched.framework.resources import is_extended_resource_name, quantity
from kubesched.framework.snapshot import Snapshot
from kubesched.model.objects import Pod
from kubesched.model.quantity import QuantityError
from kubesched.model.resource import DeviceClass

DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def is_dra_extended_resource_name(name: str) -> bool:
    return is_extended_resource_name(name) or name.startswith(DEVICE_CLASS_PREFIX)


def class_mapping(classes: Iterable[DeviceClass]) -> dict[str, DeviceClass]:
    """Resource name to class, as the extended-resource cache resolves it: of classes naming the same
    extendedResourceName the newest wins, then the lower name; the implicit name is unique."""
    out: dict[str, DeviceClass] = {}
    for c in classes:
        out[DEVICE_CLASS_PREFIX + c.metadata.name] = c
    explicit: dict[str, DeviceClass] = {}
    for c in classes:
        name = c.spec.extended_resource_name
        if not name:
            continue
        held = explicit.get(name)
        if held is None or _newer(c, held):
            explicit[name] = c
    out.update(explicit)
    return out


def _newer(c: DeviceClass, than: DeviceClass) -> bool:
    # RFC 3339 timestamps in UTC ("...Z") compare as strings.
    mine, theirs = c.metadata.creation_timestamp or "", than.metadata.creation_timestamp or ""
    if mine != theirs:
        return mine > theirs
    return c.metadata.name < than.metadata.name


def delegated_requests(pod: Pod, classes: Callable[[], Iterable[DeviceClass]],
                       snapshot: Snapshot) -> list[tuple[str, str]]:
    """(field path, class name) of each non-zero request of the pod that kube-scheduler would hand
    to DynamicResources on at least one node: a class maps it and some node's allocatable lacks it."""
    asked = [(f"spec.{kind}[{i}].resources.requests[{name}]", name)
             for kind, containers in (("initContainers", pod.spec.init_containers), ("containers", pod.spec.containers))
             for i, c in enumerate(containers)
             for name, value in c.resources.requests.items()
             if is_dra_extended_resource_name(name) and not _is_zero(value)]
    if not asked:
        # Most pods: no class is looked at.
        return []
    mapping = class_mapping(list(classes()))
    found = [(path, name, cls.metadata.name) for path, name in asked if (cls := mapping.get(name)) is not None]
    if not found:
        return []
    lacking = _lacking(snapshot, {name for _, name, _ in found})
    return [(path, cls) for path, name, cls in found if name in lacking]


def _is_zero(value: str) -> bool:
    try:
        return quantity(value) == 0
    except QuantityError:
        # The API server refuses such a pod; counted as asked, so it is never placed unseen.
        return False


def _lacking(snapshot: Snapshot, names: set[str]) -> set[str]:
    out: set[str] = set()
    for ni in snapshot.node_infos:
        scalar = ni.allocatable.scalar
        out.update(n for n in names if scalar.get(n, 0) <= 0)
        if out == names:
            break
    return out


def reason(found: Sequence[tuple[str, str]]) -> str:
    listed = "; ".join(f"{path} (DeviceClass {cls})" for path, cls in found)
    return "pod requests extended resources backed by DRA, which kubesched does not allocate yet: " + listed
