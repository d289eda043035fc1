"""Small inline-SVG charts for the dashboard (no JavaScript library, no CDN).

Every function returns SVG markup with every piece of text escaped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

STATUS_COLOURS = {
    "active": "#2f855a",
    "superseded": "#b7791f",
    "dormant": "#6b46c1",
    "archived": "#718096",
    "expired": "#c05621",
    "invalidated": "#c53030",
}
SERIES_COLOURS = ("#2b6cb0", "#2f855a", "#c05621", "#6b46c1")
LAYERS = ("working", "episodic", "semantic", "procedural", "codebase")


def _fmt(v: float) -> str:
    return f"{v:.1f}"


def layer_status_chart(rows: Sequence[Mapping[str, object]], *, width: int = 640) -> str:
    """Horizontal stacked bars: one bar per layer, one segment per status (the energy model's health check)."""
    counts: dict[str, dict[str, int]] = {}
    for row in rows:
        layer, status, count = str(row["layer"]), str(row["status"]), row["count"]
        assert isinstance(count, int)
        counts.setdefault(layer, {})[status] = counts.get(layer, {}).get(status, 0) + count
    layers = [name for name in LAYERS if name in counts] + sorted(set(counts) - set(LAYERS))
    if not layers:
        return (
            '<svg class="chart" role="img" aria-label="no memories yet" width="320" height="40">'
            '<text x="8" y="24">no memories yet</text></svg>'
        )
    label_w, bar_h, gap, legend_h = 90, 26, 10, 30
    plot_w = width - label_w - 60
    top = max(sum(c.values()) for c in counts.values()) or 1
    height = legend_h + len(layers) * (bar_h + gap) + 10
    parts = [
        f'<svg class="chart" role="img" aria-label="memories per layer and status" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
    ]
    statuses = [s for s in STATUS_COLOURS if any(s in c for c in counts.values())]
    x = label_w
    for status in statuses:
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{STATUS_COLOURS[status]}"/>'
            f'<text x="{x + 16}" y="16" class="legend">{escape(status)}</text>'
        )
        x += 24 + 8 * len(status)
    for i, layer in enumerate(layers):
        y = legend_h + i * (bar_h + gap)
        parts.append(f'<text x="{label_w - 8}" y="{y + bar_h * 0.68:.1f}" text-anchor="end">{escape(layer)}</text>')
        x_pos = float(label_w)
        for status in statuses:
            n = counts[layer].get(status, 0)
            if not n:
                continue
            w = plot_w * n / top
            parts.append(
                f'<rect x="{_fmt(x_pos)}" y="{y}" width="{_fmt(max(w, 1.0))}" height="{bar_h}" '
                f'fill="{STATUS_COLOURS.get(status, "#a0aec0")}">'
                f"<title>{escape(layer)} · {escape(status)}: {n}</title></rect>"
            )
            x_pos += w
        total = sum(counts[layer].values())
        parts.append(f'<text x="{_fmt(x_pos + 6)}" y="{y + bar_h * 0.68:.1f}" class="total">{total}</text>')
    parts.append("</svg>")
    return "".join(parts)


def line_plot(
    xs: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    x_label: str,
    marker_x: float | None = None,
    marker_label: str = "now",
    width: int = 640,
    height: int = 260,
    y_max: float = 1.0,
    hlines: Mapping[str, float] | None = None,
) -> str:
    """A line plot of several series over shared x values (y from 0 to ``y_max``, shown as percent when
    ``y_max`` is 1), with optional labelled horizontal lines (thresholds)."""
    left, right, top, bottom = 48, 16, 16, 40
    pw, ph = width - left - right, height - top - bottom
    x0, x1 = (min(xs), max(xs)) if xs else (0.0, 1.0)
    span = (x1 - x0) or 1.0

    def px(x: float) -> float:
        return left + pw * (x - x0) / span

    def py(y: float) -> float:
        y = min(max(y, 0.0), y_max)
        return top + ph * (1 - y / y_max)

    parts = [
        f'<svg class="chart plot" role="img" aria-label="{escape(", ".join(series))} over {escape(x_label)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">',
        f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" class="frame"/>',
    ]
    for i in range(5):
        yv = y_max * i / 4
        tick = f"{yv:.0%}" if y_max == 1.0 else f"{yv:.2g}"
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_fmt(py(yv))}" y2="{_fmt(py(yv))}" class="grid"/>'
            f'<text x="{left - 6}" y="{_fmt(py(yv) + 4)}" text-anchor="end" class="tick">{tick}</text>'
        )
    for label, yv in (hlines or {}).items():
        parts.append(
            f'<line x1="{left}" x2="{left + pw}" y1="{_fmt(py(yv))}" y2="{_fmt(py(yv))}" class="threshold"/>'
            f'<text x="{left + 6}" y="{_fmt(py(yv) - 5)}" class="threshold-label">{escape(label)}</text>'
        )
    for i in range(6):
        xv = x0 + span * i / 5
        parts.append(f'<text x="{_fmt(px(xv))}" y="{top + ph + 16}" text-anchor="middle" class="tick">{xv:.0f}</text>')
    parts.append(
        f'<text x="{left + pw / 2}" y="{height - 6}" text-anchor="middle" class="axis">{escape(x_label)}</text>'
    )
    if marker_x is not None and x0 <= marker_x <= x1:
        mx = px(marker_x)
        parts.append(
            f'<line x1="{_fmt(mx)}" x2="{_fmt(mx)}" y1="{top}" y2="{top + ph}" class="marker"/>'
            f'<text x="{_fmt(mx + 4)}" y="{top + 12}" class="marker-label">{escape(marker_label)}</text>'
        )
    for i, (name, ys) in enumerate(series.items()):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        points = " ".join(f"{_fmt(px(x))},{_fmt(py(y))}" for x, y in zip(xs, ys, strict=False) if math.isfinite(y))
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}">'
            f"<title>{escape(name)}</title></polyline>"
        )
        lx = left + pw - 180
        parts.append(
            f'<rect x="{lx}" y="{top + 8 + 16 * i}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{top + 17 + 16 * i}" class="legend">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    href: str


@dataclass(frozen=True, slots=True)
class Edge:
    src: str
    dst: str
    label: str


#: related memories drawn around the centre (the table under the graph lists them all)
MAX_GRAPH_NODES = 12


def _wrap(text: str, width: int, lines: int) -> list[str]:
    """``text`` in at most ``lines`` lines of about ``width`` characters (the last one cut with …)."""
    words, out, cur = text.split(), [], ""
    for word in words:
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
        if len(out) == lines:
            break
    if len(out) < lines and cur:
        out.append(cur)
    out = out[:lines]
    if out and " ".join(out) != " ".join(words):
        out[-1] = (out[-1][: width - 1].rstrip() + "…") if len(out[-1]) >= width else out[-1] + " …"
    return [line[:width] for line in out]


def relation_graph(
    centre: Node, neighbours: Sequence[Node], edges: Sequence[Edge], *, width: int = 760, height: int = 420
) -> str:
    """The memory in the middle, related memories on an ellipse around it, typed edges between; each
    node names its memory in two short lines, each edge its type on a white halo."""
    if not neighbours:
        return '<p class="muted">no relations</p>'
    n = len(neighbours)
    if n <= 2:
        height = min(height, 200)  # a single row: no need for the full height
    cx, cy = width / 2, height / 2
    rx, ry = width / 2 - 120, max(height / 2 - 60, 0)
    pos: dict[str, tuple[float, float]] = {centre.id: (cx, cy)}
    for i, node in enumerate(neighbours):
        angle = 2 * math.pi * (i + 0.5) / n - math.pi / 2
        pos[node.id] = (cx + rx * math.cos(angle), cy + ry * math.sin(angle))
    parts = [
        f'<svg class="chart graph" role="img" aria-label="relations" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="20" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#4a5568"/></marker></defs>',
    ]
    for e in edges:
        if e.src not in pos or e.dst not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        parts.append(
            f'<line x1="{_fmt(x1)}" y1="{_fmt(y1)}" x2="{_fmt(x2)}" y2="{_fmt(y2)}" class="edge" '
            f'marker-end="url(#arrow)"/>'
            f'<text x="{_fmt((x1 + x2) / 2)}" y="{_fmt((y1 + y2) / 2 - 6)}" text-anchor="middle" '
            f'class="edge-label">{escape(e.label)}</text>'
        )
    for node in [centre, *neighbours]:
        x, y = pos[node.id]
        is_centre = node is centre
        lines = _wrap(node.label, 26, 2)
        above = is_centre or y < cy - 1
        first_y = y - 18 - 13 * (len(lines) - 1) if above else y + 26
        spans = "".join(
            f'<tspan x="{_fmt(x)}" y="{_fmt(first_y + 13 * i)}">{escape(line)}</tspan>' for i, line in enumerate(lines)
        )
        parts.append(
            f'<a href="{escape(node.href)}"><circle cx="{_fmt(x)}" cy="{_fmt(y)}" r="10" '
            f'class="{"node centre" if is_centre else "node"}"><title>{escape(node.label)}</title></circle>'
            f'<text text-anchor="middle" class="node-label">{spans}</text></a>'
        )
    parts.append("</svg>")
    return "".join(parts)


__all__ = ["MAX_GRAPH_NODES", "STATUS_COLOURS", "Edge", "Node", "layer_status_chart", "line_plot", "relation_graph"]
