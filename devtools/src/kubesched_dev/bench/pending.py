"""Why pods are still Pending: what a stalled run reports instead of waiting out its timeout."""

from __future__ import annotations

from collections import Counter

import msgspec

from kubesched.api import ApiClient


class _Condition(msgspec.Struct):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""


class _Status(msgspec.Struct):
    conditions: list[_Condition] = []


class _Meta(msgspec.Struct):
    name: str = ""


class _Pod(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    status: _Status = msgspec.field(default_factory=_Status)


class _PodList(msgspec.Struct):
    items: list[_Pod] = []


class _ListMeta(msgspec.Struct):
    remainingItemCount: int = 0


class _Page(msgspec.Struct):
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)
    items: list[msgspec.Raw] = []


def describe(pods: list[_Pod]) -> str:
    """`N pending; M with <reason>: <message> (e.g. pod)`, the commonest message first; pods with no
    PodScheduled=False condition were never attempted (or the scheduler writes none)."""
    if not pods:
        return "0 pending"
    why: Counter[str] = Counter()
    example: dict[str, str] = {}
    for pod in pods:
        cond = next((c for c in pod.status.conditions if c.type == "PodScheduled" and c.status == "False"), None)
        text = f"{cond.reason}: {cond.message}" if cond is not None else "no PodScheduled condition (never attempted?)"
        why[text] += 1
        example.setdefault(text, pod.metadata.name)
    parts = [f"{n} with {text} (e.g. {example[text]})" for text, n in why.most_common(2)]
    return f"{len(pods)} pending; " + "; ".join(parts)


async def pending_summary(client: ApiClient, namespace: str) -> str:
    raw = await client.get(f"/api/v1/namespaces/{namespace}/pods", {"fieldSelector": "spec.nodeName="})
    return describe(msgspec.json.decode(raw, type=_PodList).items)


async def pods_left(client: ApiClient, namespace: str) -> int:
    """How many pods the namespace holds, from a one-pod page and its remainingItemCount (a stalled
    preemption run asks how many low-priority pods are left, not for all of them)."""
    raw = await client.get(f"/api/v1/namespaces/{namespace}/pods", {"limit": 1})
    page = msgspec.json.decode(raw, type=_Page)
    return len(page.items) + page.metadata.remainingItemCount
