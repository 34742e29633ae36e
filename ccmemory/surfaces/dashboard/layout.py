"""A deterministic O(n) graph layout: topic neighbourhoods as sunflower discs.

Force-directed layouts are O(n²) a step and unstable between visits; here every memory sits in
the disc of its first topic (memories without a topic share one disc), discs are placed on a
golden-angle spiral, largest first, and memories fill their disc on a phyllotaxis spiral, newest
in the centre. Relations are drawn as lines between them by the page. Positions are in 0..1000.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from ccmemory.index.base import IndexedMemory

GOLDEN = math.pi * (3 - math.sqrt(5))


def layout(
    mems: Sequence[IndexedMemory], edges: Sequence[tuple[str, str, str]] = ()
) -> dict[str, tuple[float, float]]:
    groups: dict[str, list[IndexedMemory]] = defaultdict(list)
    for m in mems:
        groups[m.topics[0].casefold() if m.topics else ""].append(m)
    order = sorted(groups, key=lambda g: (-len(groups[g]), g))
    raw: dict[str, tuple[float, float]] = {}
    placed: list[tuple[float, float, float]] = []  # centre x, y, radius
    for gi, g in enumerate(order):
        members = sorted(groups[g], key=lambda m: (m.created, m.id), reverse=True)
        radius = math.sqrt(len(members)) * 1.2 + 1.0
        # walk out along the spiral until the disc does not overlap a placed one
        k = gi * 3
        while True:
            r = 2.2 * math.sqrt(k) * (1 + radius / 6)
            cx, cy = r * math.cos(k * GOLDEN), r * math.sin(k * GOLDEN)
            if all(math.hypot(cx - x, cy - y) >= radius + rr + 1.0 for x, y, rr in placed):
                break
            k += 1
        placed.append((cx, cy, radius))
        for i, m in enumerate(members):
            rr = 1.2 * math.sqrt(i + 0.5)
            raw[m.id] = (cx + rr * math.cos(i * GOLDEN), cy + rr * math.sin(i * GOLDEN))
    if not raw:
        return {}
    xs = [p[0] for p in raw.values()]
    ys = [p[1] for p in raw.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    x0, y0 = min(xs), min(ys)
    return {
        i: (round(20 + 960 * (x - x0) / span, 2), round(20 + 960 * (y - y0) / span, 2))
        for i, (x, y) in raw.items()
    }
