"""An Explanation as a table (nodes with the same verdicts grouped, so 1,000 nodes read in a
screen), or as JSON / YAML (every node)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import orjson
import yaml

from kubesched.tools.explain.model import Explanation, NodeExplanation, PluginScore, Verdict
from kubesched.tools.groups import GroupVerdict, group_dict

# Without --all: how many groups of each table, and how many node names in a group, are shown.
MAX_GROUPS = 20
MAX_NAMES = 3


def to_dict(e: Explanation) -> dict[str, Any]:
    """The JSON/YAML document (schema in docs/tools.md)."""
    return {
        "pod": e.pod,
        "profile": e.profile,
        "selected": e.selected,
        "message": e.message,
        "cyclePick": e.cycle_pick,
        "nodesToFind": e.nodes_to_find,
        "preFilter": [_verdict(v) | {"nodes": list(v.node_names) if v.node_names is not None else None}
                      for v in e.pre_filter],
        "skippedScorePlugins": list(e.skipped_score_plugins),
        "notes": e.notes,
        "nodes": [_node(n) for n in e.nodes],
        "group": group_dict(e.group) if e.group is not None else None,
    }


def _verdict(v: Verdict) -> dict[str, Any]:
    return {"plugin": v.plugin, "stage": v.stage, "code": v.code_name, "reasons": list(v.reasons),
            "reported": v.reported}


def _score(s: PluginScore) -> dict[str, Any]:
    return {"plugin": s.plugin, "raw": s.raw, "normalized": s.normalized, "weight": s.weight,
            "weighted": s.weighted}


def _node(n: NodeExplanation) -> dict[str, Any]:
    return {"name": n.name, "feasible": n.feasible, "sampled": n.sampled,
            "filters": [_verdict(v) for v in n.filters], "scores": [_score(s) for s in n.scores],
            "total": n.total}


def render_json(e: Explanation) -> str:
    return orjson.dumps(to_dict(e), option=orjson.OPT_INDENT_2).decode()


def render_yaml(e: Explanation) -> str:
    return yaml.safe_dump(to_dict(e), sort_keys=False, default_flow_style=False, width=1000)


# --- the table -----------------------------------------------------------------------------------


def render_table(e: Explanation, *, show_all: bool = False) -> str:
    feasible = e.feasible
    out = [f"pod {e.pod}   profile {e.profile}   {len(e.nodes)} node(s), {len(feasible)} feasible", ""]
    rejections = [v for v in e.pre_filter if v.failed or v.node_names is not None]
    if rejections:
        out.append("PREFILTER")
        out.append(_columns([["PLUGIN", "CODE", "SAYS"]] + [
            [v.plugin, v.code_name, _says(v)] for v in rejections]))
        out.append("")
    sampling = not all(n.sampled for n in e.nodes)
    out.append("FILTERS   (reported: the status kube-scheduler records and counts in its message)")
    header = ["COUNT", "NODES", "FEASIBLE", "REPORTED", "ALSO FAILING"] + (["SAMPLED"] if sampling else [])
    rows: list[list[str]] = []
    for group in _groups(e.nodes, _filter_key, show_all):
        n = group[0]
        reported = n.reported
        also = [v for v in n.filters if v.failed and not v.reported]
        row = [str(len(group)), _names(group, show_all), "yes" if n.feasible else "no",
               _verdict_text(reported) if reported is not None else "-",
               "; ".join(_verdict_text(v) for v in also) or "-"]
        rows.append(row + (["yes" if n.sampled else "no"] if sampling else []))
    out.append(_columns([header, *_capped(rows, show_all, len(header))]))
    if feasible:
        out.append("")
        out.append("SCORES   (raw -> normalized x weight; total = sum of the weighted scores)")
        plugins = [s.plugin for s in feasible[0].scores]
        header = ["COUNT", "NODES", "TOTAL", *plugins] + (["SAMPLED"] if sampling else [])
        by_total = sorted(feasible, key=lambda n: -(n.total or 0))
        rows = []
        for group in _groups(by_total, _score_key, show_all):
            n = group[0]
            row = [str(len(group)), _names(group, show_all), str(n.total),
                   *(f"{s.raw} -> {s.normalized} x{s.weight}" for s in n.scores)]
            rows.append(row + (["yes" if n.sampled else "no"] if sampling else []))
        out.append(_columns([header, *_capped(rows, show_all, len(header))]))
    out.append("")
    if e.selected:
        shown = e.selected if show_all or len(e.selected) <= MAX_NAMES else e.selected[:MAX_NAMES]
        more = f" +{len(e.selected) - len(shown)} more, tied" if len(shown) < len(e.selected) else ""
        out.append(f"selected: {' '.join(shown)}{more}")
    if e.message:
        out.append(f"message: {e.message}")
    if e.group is not None:
        out.extend(["", *_group(e.group, show_all)])
    out.extend(f"note: {note}" for note in e.notes)
    return "\n".join(out) + "\n"


def _group(g: GroupVerdict, show_all: bool) -> list[str]:
    """The group's pods, where each would go, and the verdict; for a pod that fits nowhere, its
    nodes grouped by reason."""
    policy = f"{g.policy}, " if g.policy else ""
    out = [f"GROUP {g.group}   {g.api} ({policy}min {g.min_count})   {g.queued} queued, {g.bound} bound"]
    if g.members:
        rows = [["POD", "NODE", "MESSAGE"]]
        for m in g.members:
            node = m.node if m.fits else "-"
            rows.append([m.pod, node or "-", m.message or ("would be placed" if g.placed else "fits")])
            by_reason: dict[str, list[str]] = {}
            for name, reason in m.node_reasons.items():
                by_reason.setdefault(reason, []).append(name)
            for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
                shown = names if show_all or len(names) <= MAX_NAMES else [*names[:MAX_NAMES],
                                                                             f"+{len(names) - MAX_NAMES} more"]
                rows.append(["", "  " + " ".join(shown), reason])
        out.append(_columns(rows))
    out.append(f"group: {'placed whole' if g.placed else 'not placed: ' + g.message}")
    return out


def _filter_key(n: NodeExplanation) -> tuple[object, ...]:
    return (n.feasible, n.sampled, tuple(v for v in n.filters if v.failed))


def _score_key(n: NodeExplanation) -> tuple[object, ...]:
    return (n.sampled, n.total, n.scores)


def _groups(nodes: Sequence[NodeExplanation], key: Callable[[NodeExplanation], tuple[object, ...]],
            show_all: bool) -> list[list[NodeExplanation]]:
    """Nodes with the same key, in order of first appearance; one node per group with --all.
    Rejected nodes: the biggest groups first."""
    if show_all:
        return [[n] for n in nodes]
    groups: dict[tuple[object, ...], list[NodeExplanation]] = {}
    for n in nodes:
        groups.setdefault(key(n), []).append(n)
    found = list(groups.values())
    if key is _filter_key:
        found.sort(key=lambda g: (g[0].feasible, -len(g)))
    return found


def _capped(rows: list[list[str]], show_all: bool, width: int) -> list[list[str]]:
    if show_all or len(rows) <= MAX_GROUPS:
        return rows
    hidden = rows[MAX_GROUPS:]
    count = sum(int(r[0]) for r in hidden)
    more = [str(count), f"... {len(hidden)} more group(s) (--all shows every node)"]
    return [*rows[:MAX_GROUPS], more + [""] * (width - len(more))]


def _names(group: list[NodeExplanation], show_all: bool) -> str:
    if show_all or len(group) <= MAX_NAMES:
        return " ".join(n.name for n in group)
    return " ".join(n.name for n in group[:MAX_NAMES]) + f" +{len(group) - MAX_NAMES} more"


def _verdict_text(v: Verdict) -> str:
    reasons = ", ".join(v.reasons)
    return f"{v.plugin}: {reasons}" if reasons else f"{v.plugin}: {v.code_name}"


def _says(v: Verdict) -> str:
    if v.failed:
        return ", ".join(v.reasons) or "-"
    assert v.node_names is not None
    return "only node(s) " + " ".join(v.node_names) if v.node_names else "no node"


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)
