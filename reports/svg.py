"""An SVG drawing of a task graph: one lane per stream, tasks in issue order, event arrows.

Each op of a :class:`conformance.graphs.Case` is a box in its stream's lane, placed at its
issue position so cross-stream order reads left to right; a record -> wait pair on an
event is an arrow between lanes; ops the plan disables are struck out; ops the plan
changes with SetParams carry a marker. Plain SVG text, no dependency.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mdlri_conformance.conformance.engine import graphs

BOX_W, BOX_H, GAP, LANE_H, LEFT, TOP = 92, 30, 14, 56, 78, 24


def _label(op: Any) -> str:
    if isinstance(op, graphs.Launch):
        return op.kernel
    if isinstance(op, graphs.Record):
        return f"record e{op.event}"
    if isinstance(op, graphs.Wait):
        return f"wait e{op.event}"
    if isinstance(op, graphs.ValueWrite):
        return f"write w{op.word}={op.value}"
    if isinstance(op, graphs.ValueWait):
        return f"wait w{op.word}=={op.value}"
    if isinstance(op, graphs.Memset):
        return f"memset b{op.buffer}"
    return type(op).__name__


def _detail(op: Any) -> str:
    if isinstance(op, graphs.Launch):
        return ", ".join(f"{k}={v}" for k, v in op.args.items())
    return ""


def _step(step: Any) -> str:
    if isinstance(step, graphs.SetKernel):
        return f"set #{step.op}" + (f"={step.kernel}" if step.kernel else "")
    if isinstance(step, graphs.SetValue):
        return f"set #{step.op}={step.value}"
    if isinstance(step, graphs.SetBadType):
        return f"set #{step.op} type {step.type}"
    if isinstance(step, graphs.Disable):
        return f"disable #{step.op}"
    if isinstance(step, graphs.Execute):
        return "execute" + (f" x{step.times}" if step.times != 1 else "")
    if isinstance(step, graphs.Sync):
        return f"sync {step.timeout_ms}"
    return "update"


def case_svg(case: graphs.Case, title: str = "") -> str:
    """The drawing as an ``<svg>`` element string."""
    disabled = {s.op for s in case.plan if isinstance(s, graphs.Disable)}
    changed = {s.op for s in case.plan if isinstance(s, (graphs.SetKernel, graphs.SetValue,
                                                          graphs.SetBadType))}
    n = max(len(case.ops), 1)
    plan = "plan: " + " -> ".join(_step(s) for s in case.plan) if case.plan else ""
    width = max(LEFT + n * (BOX_W + GAP) + GAP, 6 * len(plan) + 8)
    height = TOP + case.streams * LANE_H + 10 + (16 if plan else 0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">',
             '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" '
             'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#c0392b"/></marker></defs>']
    if title:
        parts.append(f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>')
    for s in range(case.streams):
        y = TOP + s * LANE_H
        parts.append(f'<line x1="{LEFT - 6}" y1="{y + BOX_H / 2}" x2="{width - 4}" '
                     f'y2="{y + BOX_H / 2}" stroke="#ccc"/>')
        name = "origin" if s == 0 else f"stream {s}"
        parts.append(f'<text x="4" y="{y + BOX_H / 2 + 4}">{name}</text>')
    centers: dict[int, tuple[float, float]] = {}
    for i, op in enumerate(case.ops):
        x = LEFT + i * (BOX_W + GAP)
        y = TOP + op.stream * LANE_H
        centers[i] = (x, y)
        fill = "#fdebd0" if isinstance(op, graphs.Launch) else "#eaf2f8"
        stroke = "#e67e22" if i in changed else "#555"
        tip = escape(f"op {i}: {_label(op)} {_detail(op)}".strip())
        parts.append(f'<g><title>{tip}</title><rect x="{x}" y="{y}" width="{BOX_W}" '
                     f'height="{BOX_H}" rx="4" fill="{fill}" stroke="{stroke}" '
                     f'stroke-width="{2 if i in changed else 1}"/>')
        parts.append(f'<text x="{x + 4}" y="{y + 12}">{escape(_label(op))[:15]}</text>')
        parts.append(f'<text x="{x + 4}" y="{y + 24}" fill="#777">#{i}</text>')
        if i in disabled:
            parts.append(f'<line x1="{x}" y1="{y}" x2="{x + BOX_W}" y2="{y + BOX_H}" '
                         'stroke="#c0392b" stroke-width="2"/>')
            parts.append(f'<line x1="{x}" y1="{y + BOX_H}" x2="{x + BOX_W}" y2="{y}" '
                         'stroke="#c0392b" stroke-width="2"/>')
        parts.append("</g>")
    record_at: dict[int, int] = {}
    for i, op in enumerate(case.ops):
        if isinstance(op, graphs.Record):
            record_at[op.event] = i
        elif isinstance(op, graphs.Wait) and op.event in record_at:
            (x1, y1), (x2, y2) = centers[record_at[op.event]], centers[i]
            parts.append(f'<line x1="{x1 + BOX_W}" y1="{y1 + BOX_H / 2}" x2="{x2}" '
                         f'y2="{y2 + BOX_H / 2}" stroke="#c0392b" stroke-dasharray="4,2" '
                         'marker-end="url(#arrow)"/>')
    if plan:
        parts.append(f'<text x="4" y="{height - 8}" fill="#333">{escape(plan)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
