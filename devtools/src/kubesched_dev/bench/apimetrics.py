"""The apiserver's writes during a run, from its own apiserver_request_total counter: what each
pod cost it in requests (the binding, the event, a status patch...), whoever sent them."""

from __future__ import annotations

import re

from kubesched.api import ApiClient, ApiConnectionError, ApiError

READ_VERBS = frozenset({"GET", "LIST", "WATCH", "CONNECT"})
_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def writes(exposition: str) -> dict[str, float]:
    """Writes counted so far, by "VERB resource[/subresource]" (group-qualified outside the core
    group), the successful ones together and each failing code apart ("POST events 400")."""
    out: dict[str, float] = {}
    for line in exposition.splitlines():
        m = _SAMPLE.match(line)
        if m is None:
            continue
        labels = dict(_LABEL.findall(m["labels"]))
        verb = labels.get("verb", "")
        if not verb or verb in READ_VERBS:
            continue
        resource = labels.get("resource", "")
        if group := labels.get("group", ""):
            resource = f"{resource}.{group}"
        if sub := labels.get("subresource", ""):
            resource = f"{resource}/{sub}"
        key = f"{verb} {resource}"
        if not (code := labels.get("code", "")).startswith("2"):
            key = f"{key} {code}"
        out[key] = out.get(key, 0.0) + float(m["value"])
    return out


def per_pod(before: dict[str, float], after: dict[str, float], pods: int) -> dict[str, float]:
    """What each kind of write grew by, a pod (those that did not grow left out), most first."""
    if pods <= 0:
        return {}
    grown = {k: (v - before.get(k, 0.0)) / pods for k, v in after.items() if v > before.get(k, 0.0)}
    return dict(sorted(grown.items(), key=lambda kv: (-kv[1], kv[0])))


def events_written(counts: dict[str, float]) -> float:
    return sum(v for k, v in counts.items() if k.startswith("POST events"))


async def scrape(client: ApiClient) -> dict[str, float] | None:
    """The counters now; None when /metrics cannot be read (the run goes on without them)."""
    try:
        return writes((await client.get("/metrics")).decode(errors="replace"))
    except (ApiError, ApiConnectionError):
        return None
