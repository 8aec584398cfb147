"""scheduler_perf's Create...WithRetries (CreatePodWithRetries, CreatePersistentVolumeClaimWithRetries, ...)."""

from __future__ import annotations

import asyncio
from typing import Any

from kubesched.api import ApiClient, ApiError

RETRIES = 5


async def create_with_retries(client: ApiClient, path: str, body: dict[str, Any]) -> bytes:
    """The apiserver's answer, undecoded (most callers need none of it); transient errors (5xx,
    429) retried with backoff, an existing object (409) taken as created (b"" then), any other
    error raised."""
    for attempt in range(RETRIES):
        resp = await client.request("POST", path, body=body)
        if resp.ok:
            return resp.body
        if resp.status == 409:
            return b""
        if (resp.status < 500 and resp.status != 429) or attempt == RETRIES - 1:
            raise ApiError.from_response(resp.status, resp.body, method="POST", path=path)
        await asyncio.sleep(0.1 * 2 ** attempt)
    raise AssertionError("unreachable")
