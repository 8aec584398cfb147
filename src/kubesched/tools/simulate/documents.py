"""Manifests read as Kubernetes reads YAML: every document of a file, with aliases bounded as
sigs.k8s.io/yaml bounds them, so a small file cannot expand into gigabytes before it is refused."""

from __future__ import annotations

from typing import Any

import yaml

from kubesched.tools.simulate.expand import ExpandError

# sigs.k8s.io/yaml's decoder (goyaml.v2/decode.go, allowedAliasRatio): up to 400,000 decoded
# nodes, 99 % of them may come from aliases; from 4,000,000 on, 10 %; linear in between. Checked
# only past 100 aliases and 1,000 nodes.
ALIAS_RATIO_LOW, ALIAS_RATIO_HIGH = 400_000, 4_000_000


def allowed_alias_ratio(decodes: int) -> float:
    if decodes <= ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - ALIAS_RATIO_LOW) / (ALIAS_RATIO_HIGH - ALIAS_RATIO_LOW)


def alias_expansion_ok(decodes: int, aliases: int) -> bool:
    """goyaml.v2's test: `aliases` of the `decodes` nodes decoded so far came through an alias."""
    return aliases <= 100 or decodes <= 1000 or aliases / decodes <= allowed_alias_ratio(decodes)


class _ExpansionCounter:
    """Walks a composed YAML node graph (an alias is the anchored node met again) in document order
    without expanding it: a node's expanded size is computed once, and an alias adds it at once.
    The ratio only rises inside an alias's expansion, so checking at the end of each is exact."""

    def __init__(self) -> None:
        self.decodes = 0
        self.aliases = 0
        self._sizes: dict[int, int] = {}
        self._open: set[int] = set()
        self._seen: set[int] = set()

    def size(self, node: yaml.Node) -> int:
        key = id(node)
        if key in self._sizes:
            return self._sizes[key]
        if key in self._open:
            raise ExpandError(f"the YAML anchor {_anchor(node)} contains itself (a recursive alias)")
        self._open.add(key)
        n = 1 + sum(self.size(child) for child in _children(node))
        self._open.discard(key)
        self._sizes[key] = n
        return n

    def walk(self, node: yaml.Node) -> None:
        key = id(node)
        if key in self._seen:  # an alias: its own node, then all of its expansion at once
            n = self.size(node)
            self.decodes += 1 + n
            self.aliases += n
            if not alias_expansion_ok(self.decodes, self.aliases):
                raise ExpandError(
                    f"YAML aliases make {self.aliases:,} of its first {self.decodes:,} nodes, more than the "
                    f"{allowed_alias_ratio(self.decodes):.0%} Kubernetes' YAML decoder (sigs.k8s.io/yaml) allows "
                    f"(99% up to {ALIAS_RATIO_LOW:,} nodes, falling to 10% at {ALIAS_RATIO_HIGH:,}): refused")
            return
        self._seen.add(key)
        self.size(node)  # refuses a recursive alias before it is walked
        self.decodes += 1
        for child in _children(node):
            self.walk(child)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _anchor(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "?"


class _BoundedLoader(yaml.SafeLoader):
    """yaml.safe_load_all's loader, refusing a document whose aliases expand past the bound before
    anything is built from it."""

    def compose_document(self) -> yaml.Node | None:
        node: yaml.Node | None = super().compose_document()
        if node is not None:
            _ExpansionCounter().walk(node)
        return node


def load_documents(text: str, name: str) -> list[Any]:
    """The YAML (or JSON) documents of `text`, none of them null; raises ExpandError naming `name`
    and the document for excessive aliasing, yaml.YAMLError for what is not YAML."""
    loader = _BoundedLoader(text)
    docs: list[Any] = []
    try:
        while loader.check_data():  # type: ignore[no-untyped-call]
            try:
                doc = loader.get_data()
            except ExpandError as exc:
                raise ExpandError(f"{name}: document {len(docs) + 1}: {exc}") from None
            except RecursionError:
                raise ExpandError(f"{name}: document {len(docs) + 1}: nested too deeply to read") from None
            if doc is not None:
                docs.append(doc)
    finally:
        loader.dispose()
    return docs
