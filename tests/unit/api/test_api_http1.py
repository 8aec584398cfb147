from __future__ import annotations

import asyncio

import pytest

from kubesched.api.http1 import _parse_head, _read_chunked


@pytest.mark.parametrize(("head", "expected"), [
    pytest.param(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n",
                 (201, 12, False, True), id="created"),
    pytest.param(b"HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n", (409, None, True, True),
                 id="chunked"),
    pytest.param(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", (200, 0, False, False),
                 id="close"),
    pytest.param(b"HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\n", (200, 2, False, False), id="http-1.0"),
])
def test_parse_head(head: bytes, expected: tuple[int, int | None, bool, bool]) -> None:
    assert _parse_head(head) == expected


def test_parse_head_rejects_garbage() -> None:
    with pytest.raises(ValueError, match=r"not an HTTP/1\.x status line"):
        _parse_head(b"SSH-2.0-OpenSSH\r\n\r\n")


async def test_read_chunked() -> None:
    reader = asyncio.StreamReader()
    reader.feed_data(b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n")
    reader.feed_eof()
    assert await _read_chunked(reader) == b"hello, world"
