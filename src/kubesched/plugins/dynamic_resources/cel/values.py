"""The two object types of the Kubernetes CEL libraries, `kubernetes.Quantity` and `kubernetes.Semver`.

The CEL runtime used here takes no opaque Python values, so each is a protobuf message built at
import time (no .proto file): a single string holding the value in a canonical form, so that CEL's
message equality is the value equality of upstream's `Equal` (Quantity.Cmp == 0; Version.EQ, which
ignores build metadata). The field name is one no selector would use.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from kubesched.plugins.dynamic_resources.cel import quantity as q
from kubesched.plugins.dynamic_resources.cel import semver as sv

QUANTITY_TYPE = "kubernetes.Quantity"
SEMVER_TYPE = "kubernetes.Semver"
_FIELD = "kubesched_internal_value"


def _pool() -> descriptor_pool.DescriptorPool:
    f = descriptor_pb2.FileDescriptorProto(name="kubesched/cel/kubernetes.proto", package="kubernetes",
                                           syntax="proto3")
    for name in ("Quantity", "Semver"):
        m = f.message_type.add(name=name)
        m.field.add(name=_FIELD, number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return pool


POOL = _pool()
QuantityMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(QUANTITY_TYPE))
SemverMessage: Any = message_factory.GetMessageClass(POOL.FindMessageTypeByName(SEMVER_TYPE))


def quantity_message(value: q.Quantity) -> Any:
    return QuantityMessage(**{_FIELD: value.canonical()})


def semver_message(value: sv.Version) -> Any:
    return SemverMessage(**{_FIELD: value.key()})


@lru_cache(maxsize=4096)
def _quantity(text: str) -> q.Quantity:
    return q.from_canonical(text)


@lru_cache(maxsize=4096)
def _semver(text: str) -> sv.Version:
    return sv.parse(text)


def is_quantity(v: object) -> bool:
    return isinstance(v, QuantityMessage)


def is_semver(v: object) -> bool:
    return isinstance(v, SemverMessage)


def quantity_of(msg: Any) -> q.Quantity:
    return _quantity(getattr(msg, _FIELD))


def semver_of(msg: Any) -> sv.Version:
    return _semver(getattr(msg, _FIELD))
