"""Decoding the apiserver's JSON into the slim structs without letting one object fail a list.

Go writes `null` for a nil slice, map or pointer whose field has no `omitempty` (`ContainerImage.names`,
and every field of the bare object in a watch BOOKMARK), and a client may store nulls the apiserver
keeps. The structs declare plain `list[str]` and `dict[str, str]`, because the hot path should not
test for None; so a null would fail msgspec's typed decode. The typed decode stays the fast path;
only when it fails is the object decoded loosely, its nulls dropped (a null field means "unset",
as in Go), and converted again. An object that still does not fit is reported with its key and
skipped, never allowed to fail the whole list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from kubesched.model.objects import ListMeta

T = TypeVar("T")


def drop_nulls(value: Any) -> Any:
    """The value with every null field removed and every null list element dropped."""
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value if v is not None]
    return value


class _Meta(msgspec.Struct, rename="camel"):
    name: str | None = None
    namespace: str | None = None
    resource_version: str | None = None


class _MetaOnly(msgspec.Struct):
    metadata: _Meta | None = None


_meta_decoder = msgspec.json.Decoder(_MetaOnly)


@dataclass(frozen=True, slots=True)
class Skipped:
    """An object that could not be decoded: its key (as far as it can be read) and why."""

    key: str
    error: str


def object_meta(raw: bytes | msgspec.Raw) -> _Meta:
    """name, namespace and resourceVersion of any object, or empty ones if even that is unreadable."""
    try:
        meta = _meta_decoder.decode(raw).metadata
    except msgspec.DecodeError:
        return _Meta()
    return meta or _Meta()


def _describe(raw: bytes | msgspec.Raw) -> str:
    meta = object_meta(raw)
    if meta.namespace:
        return f"{meta.namespace}/{meta.name or '?'}"
    return meta.name or "(no name)"


class TolerantDecoder(Generic[T]):
    def __init__(self, type_: type[T]) -> None:
        self.type = type_
        self._typed = msgspec.json.Decoder(type_)
        self._loose = msgspec.json.Decoder()

    def decode(self, raw: bytes | msgspec.Raw) -> T:
        """The object, nulls read as unset. Raises msgspec.DecodeError (malformed JSON) or
        msgspec.ValidationError (a field of the wrong type even after nulls were dropped)."""
        try:
            return self._typed.decode(raw)
        except msgspec.ValidationError:
            return msgspec.convert(drop_nulls(self._loose.decode(raw)), self.type)

    def try_decode(self, raw: bytes | msgspec.Raw) -> T | Skipped:
        try:
            return self.decode(raw)
        except msgspec.DecodeError as e:  # ValidationError is a DecodeError
            return Skipped(_describe(raw), str(e))


class ListDecoder(Generic[T]):
    """One page of a list: (metadata, items, skipped). The whole page is decoded typed in one pass
    when it can be; otherwise loosely, item by item, so one bad object costs only itself."""

    def __init__(self, type_: type[T], list_type: type[Any]) -> None:
        self.type = type_
        self._page = msgspec.json.Decoder(list_type)
        self._loose = msgspec.json.Decoder()

    def decode(self, body: bytes) -> tuple[ListMeta, list[T], list[Skipped]]:
        try:
            page = self._page.decode(body)
            return page.metadata, page.items, []
        except msgspec.ValidationError:
            pass
        loose = drop_nulls(self._loose.decode(body))  # malformed JSON still raises: the stream is broken
        if not isinstance(loose, dict):
            raise msgspec.ValidationError(f"expected a list object, got {type(loose).__name__}")
        meta = msgspec.convert(loose.get("metadata", {}), ListMeta)
        items: list[T] = []
        skipped: list[Skipped] = []
        for item in loose.get("items", []):
            try:
                items.append(msgspec.convert(item, self.type))
            except msgspec.ValidationError as e:
                skipped.append(Skipped(_key_of(item), str(e)))
        return meta, items, skipped


def _key_of(item: Any) -> str:
    meta = item.get("metadata") if isinstance(item, dict) else None
    if not isinstance(meta, dict):
        return "(no metadata)"
    name, namespace = meta.get("name", "?"), meta.get("namespace")
    return f"{namespace}/{name}" if namespace else str(name)
