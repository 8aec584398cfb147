"""Are a run's placements valid for its workload? Pure: placements in, a verdict out.

Placements are read back from the apiserver after the run (pod -> node of every measured pod with a
node), independent of what the contender believes. A violation fails the run; the summary says what
was checked and the worst figure seen, so a valid run shows its margin too.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from kubesched_dev.bench.workloads import Plan, group_sizes, pod_group_name

MAX_LISTED = 5  # violations named in the message; the count says how many in all


@dataclass
class Validity:
    ok: bool
    summary: str  # what was checked, e.g. "zone skew <= 1 in 5 groups (max 1)"
    violations: list[str] = field(default_factory=list)
    victims: int | None = None  # preemption: low-priority pods gone

    def message(self) -> str:
        if self.ok:
            return self.summary
        shown = "; ".join(self.violations[:MAX_LISTED])
        more = len(self.violations) - MAX_LISTED
        tail = f"; {more} more" if more > 0 else ""
        return f"{len(self.violations)} violation(s) of {self.summary}: {shown}{tail}"


def check(plan: Plan, placements: dict[str, str], fill_left: dict[str, str] | None = None) -> Validity | None:
    """None for the basic workload (nothing beyond the capacity check); `fill_left` is preemption's
    low-priority pods still there and not terminating, pod -> node."""
    if plan.workload == "spread":
        return zone_spread(plan, placements)
    if plan.workload == "anti-affinity":
        return anti_affinity(plan, placements)
    if plan.workload == "preemption":
        return preemption(plan, placements, fill_left or {})
    if plan.workload == "pv":
        return volumes(plan, placements)
    if plan.workload == "gang-batch":
        return gangs_whole(plan, placements)
    return None


def gangs_whole(plan: Plan, placements: dict[str, str]) -> Validity:
    """Every gang placed whole or not at all (all-or-nothing: minCount is the group's size)."""
    placed = Counter(plan.group_of(p) for p in placements if p in plan.index)
    sizes = group_sizes(plan)
    violations = [f"gang {pod_group_name(g)}: {placed[g]} of {size} pods placed"
                  for g, size in enumerate(sizes) if 0 < placed[g] < size]
    whole = sum(1 for g, size in enumerate(sizes) if placed[g] == size)
    return Validity(not violations, f"every gang whole or not placed ({whole}/{len(sizes)} whole)", violations)


def _groups(plan: Plan, placements: dict[str, str]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for pod, node in placements.items():
        if pod in plan.index:
            out[plan.group_of(pod)].append(node)
    return dict(sorted(out.items()))


def zone_spread(plan: Plan, placements: dict[str, str]) -> Validity:
    """Per group, pods per zone over every zone of the cluster (all nodes are eligible, so every zone
    is a domain, an empty one included): max - min must be at most 1 (maxSkew)."""
    zones = sorted(set(plan.zone_of.values()))
    groups = _groups(plan, placements)
    violations: list[str] = []
    worst = 0
    for g, nodes in groups.items():
        per_zone = Counter(plan.zone_of.get(n, "?") for n in nodes)
        counts = [per_zone.get(z, 0) for z in zones]
        skew = max(counts) - min(counts)
        worst = max(worst, skew)
        if "?" in per_zone:
            violations.append(f"group g{g}: {per_zone['?']} pod(s) on nodes outside the plan's zones")
        if skew > 1:
            lo, hi = zones[counts.index(min(counts))], zones[counts.index(max(counts))]
            violations.append(f"group g{g}: zone skew {skew} ({hi} has {max(counts)}, {lo} has {min(counts)})")
    return Validity(not violations, f"zone skew <= 1 in {len(groups)} group(s) (max {worst})", violations)


def anti_affinity(plan: Plan, placements: dict[str, str]) -> Validity:
    groups = _groups(plan, placements)
    violations: list[str] = []
    most = 0
    for g, nodes in groups.items():
        per_node = Counter(nodes)
        most = max(most, *per_node.values())
        for node, n in sorted(per_node.items()):
            if n > 1:
                violations.append(f"group g{g}: {n} pods on {node}")
    return Validity(not violations, f"one pod a node per group in {len(groups)} group(s) (max {most})", violations)


def preemption(plan: Plan, placements: dict[str, str], fill_left: dict[str, str]) -> Validity:
    """Every preemptor bound (checked by the run's bound count), each on a node that lost at least
    one low-priority pod: the node was full, so none could bind without preempting."""
    before = Counter(plan.fill.values())
    after = Counter(fill_left.values())
    lost = {node: before[node] - after.get(node, 0) for node in before}
    victims = sum(lost.values())
    violations: list[str] = []
    per_node = Counter(placements.values())
    for node, n in sorted(per_node.items()):
        if lost.get(node, 0) == 0:
            violations.append(f"{n} preemptor(s) on {node}, which lost no low-priority pod")
    summary = (f"every preemptor preempted: {len(placements)} bound, {victims} victim(s) "
               f"({victims / len(placements):.1f} a preemptor)" if placements else "every preemptor preempted")
    return Validity(not violations, summary, violations, victims=victims)


def volumes(plan: Plan, placements: dict[str, str]) -> Validity:
    violations = [f"{pod} on {node}, its PV is on {plan.pv_node[pod]}"
                  for pod, node in sorted(placements.items()) if pod in plan.pv_node and plan.pv_node[pod] != node]
    return Validity(not violations, f"each pod on its PV's node ({len(placements)} pod(s))", violations)
