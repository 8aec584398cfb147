"""The Go serializer's protobuf bodies of testdata/protobuf_golden.txt, by name."""

from __future__ import annotations

from pathlib import Path


def _load() -> dict[str, bytes]:
    text = (Path(__file__).parent / "testdata" / "protobuf_golden.txt").read_text()
    return {name: bytes.fromhex(hexed) for line in text.splitlines() if line and not line.startswith("#")
            for name, hexed in [line.split()]}


GOLDEN = _load()
