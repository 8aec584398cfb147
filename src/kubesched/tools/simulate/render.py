"""A Simulation as a table (per pod its node or message, then per node what it would hold) or as
JSON (schema in docs/tools.md)."""

from __future__ import annotations

from typing import Any

import orjson

from kubesched.tools.groups import group_dict
from kubesched.tools.simulate.place import Placement
from kubesched.tools.simulate.run import NodeSummary, Simulation

GIB = 1 << 30


def to_dict(sim: Simulation) -> dict[str, Any]:
    return {
        "pods": [_placement(p) for p in sim.placements],
        "nodes": [_node(n) for n in sim.nodes],
        "addedNodes": sim.added_nodes,
        "drainedNodes": sim.drained_nodes,
        "summary": {"pods": len(sim.placements), "placed": len(sim.placements) - len(sim.unschedulable),
                    "unschedulable": len(sim.unschedulable)},
        "groups": [group_dict(g) for g in sim.groups],
        "notes": sim.notes,
    }


def _placement(p: Placement) -> dict[str, Any]:
    return {"pod": p.pod, "node": p.node, "message": p.message, "reason": p.reason, "profile": p.profile,
            "nominatedNode": p.nominated_node, "victims": p.victims, "replaces": p.replaces, "group": p.group}


def _node(n: NodeSummary) -> dict[str, Any]:
    return {"name": n.name, "placed": n.placed, "pods": n.pods,
            "requested": {"cpu": f"{n.cpu_requested_m}m", "memory": str(n.memory_requested)},
            "allocatable": {"cpu": f"{n.cpu_allocatable_m}m", "memory": str(n.memory_allocatable)},
            "added": n.added, "drained": n.drained}


def render_json(sim: Simulation) -> str:
    return orjson.dumps(to_dict(sim), option=orjson.OPT_INDENT_2).decode()


def render_table(sim: Simulation) -> str:
    out = [_columns([["POD", "NODE", "MESSAGE"]] + [
        [p.pod, p.node or "-", _says(p)] for p in sim.placements])]
    out.append("")
    rows = [["NODE", "PLACED", "PODS", "CPU REQ/ALLOC", "MEMORY REQ/ALLOC (Gi)", "WHAT-IF"]]
    for n in sim.nodes:
        rows.append([n.name, str(len(n.placed)), str(len(n.pods)),
                     f"{n.cpu_requested_m / 1000:g}/{n.cpu_allocatable_m / 1000:g}",
                     f"{n.memory_requested / GIB:.1f}/{n.memory_allocatable / GIB:.1f}",
                     "added" if n.added else "drained" if n.drained else ""])
    out.append(_columns(rows))
    if sim.groups:
        out.append("")
        out.append(_columns([["GROUP", "API", "MIN", "FIT", "PLACED", "WHY NOT"]] + [
            [g.group, g.api, str(g.min_count), f"{len(g.fitting)}/{g.queued}" + (f" +{g.bound} bound" * bool(g.bound)),
             "yes" if g.placed else "no", g.message or "-"] for g in sim.groups]))
    placed = len(sim.placements) - len(sim.unschedulable)
    out.append("")
    out.append(f"{placed} of {len(sim.placements)} pod(s) placed, {len(sim.unschedulable)} unschedulable")
    out.extend(f"note: {note}" for note in sim.notes)
    return "\n".join(out) + "\n"


def _says(p: Placement) -> str:
    parts = []
    if p.replaces:
        parts.append(f"(from drained {p.replaces})")
    if p.message:
        parts.append(p.message)
    return " ".join(parts)


def _columns(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)
