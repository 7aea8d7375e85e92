"""An SVG drawing of a task graph: one lane per stream, tasks in issue order, event arrows.

Each op of a case (the plain dict of ``divergences.json``) is a box in its stream's lane,
placed at its issue position so cross-stream order reads left to right; a record -> wait
pair on an event is an arrow between lanes; ops the plan disables are struck out; ops the
plan changes with SetParams carry a marker. Plain SVG text, no dependency.
"""

from __future__ import annotations

from html import escape
from typing import Any

BOX_W, BOX_H, GAP, LANE_H, LEFT, TOP = 92, 30, 14, 56, 78, 24

#: the fields each op / plan-step kind of a case dict needs (conformance/engine/graphs.py's
#: ``to_dict`` format: every op and step is an object with a ``kind``)
_OP_FIELDS = {"launch": ("stream", "kernel", "args"), "record": ("stream", "event"),
              "wait": ("stream", "event"), "value_write": ("stream", "word", "value"),
              "value_wait": ("stream", "word", "value"), "memset": ("stream", "buffer", "value")}
_STEP_FIELDS = {"set_kernel": ("op", "args"), "set_value": ("op", "value"),
                "set_bad_type": ("op", "type"), "disable": ("op",), "update": (),
                "execute": (), "sync": ()}


class CaseError(ValueError):
    """A case dict this drawing cannot read (the report shows the case without a drawing)."""


def _checked(items: Any, table: dict[str, tuple[str, ...]], where: str) -> list[dict[str, Any]]:
    if not isinstance(items, list):
        raise CaseError(f"{where}: expected a list")
    for i, item in enumerate(items):
        if not isinstance(item, dict) or item.get("kind") not in table:
            raise CaseError(f"{where}[{i}]: expected an object with kind in {sorted(table)}")
        missing = [f for f in table[item["kind"]] if f not in item]
        if missing:
            raise CaseError(f"{where}[{i}]: missing {', '.join(missing)}")
    return items


#: the label of each op kind but ``launch`` (whose label is its kernel), and of the plan steps
#: that name one op; formatted with the op's / step's fields
_LABELS = {"record": "record e{event}", "wait": "wait e{event}",
           "value_write": "write w{word}={value}", "value_wait": "wait w{word}=={value}",
           "memset": "memset b{buffer}"}
_STEPS = {"set_value": "set #{op}={value}", "set_bad_type": "set #{op} type {type}",
          "disable": "disable #{op}"}


def _label(op: dict[str, Any]) -> str:
    if op["kind"] == "launch":
        return str(op["kernel"])
    return _LABELS[op["kind"]].format(**op)


def _detail(op: dict[str, Any]) -> str:
    if op["kind"] == "launch":
        return ", ".join(f"{k}={v}" for k, v in op["args"].items())
    return ""


def _step(step: dict[str, Any]) -> str:
    kind = step["kind"]
    if kind == "set_kernel":
        return f"set #{step['op']}" + (f"={step['kernel']}" if step.get("kernel") else "")
    if kind in _STEPS:
        return _STEPS[kind].format(**step)
    if kind == "execute":
        times = step.get("times", 1)
        return "execute" + (f" x{times}" if times != 1 else "")
    if kind == "sync":
        return f"sync {step.get('timeout_ms', 5000)}"
    return "update"


def case_svg(case: dict[str, Any], title: str = "") -> str:
    """The drawing of a case dict (as stored in ``divergences.json``) as an ``<svg>`` element
    string; a dict it cannot read raises :class:`CaseError`."""
    if not isinstance(case, dict):
        raise CaseError("case: expected a JSON object")
    if case.get("schema", 1) != 1:
        raise CaseError(f"case: schema {case.get('schema')!r} is not 1")
    try:
        streams = int(case["streams"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CaseError(f"case: streams ({exc})") from None
    ops = _checked(case.get("ops"), _OP_FIELDS, "ops")
    steps = _checked(case.get("plan", []), _STEP_FIELDS, "plan")
    disabled = {s["op"] for s in steps if s["kind"] == "disable"}
    changed = {s["op"] for s in steps if s["kind"] in ("set_kernel", "set_value", "set_bad_type")}
    n = max(len(ops), 1)
    plan = "plan: " + " -> ".join(_step(s) for s in steps) if steps else ""
    width = max(LEFT + n * (BOX_W + GAP) + GAP, 6 * len(plan) + 8)
    height = TOP + streams * LANE_H + 10 + (16 if plan else 0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="10">',
             '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" '
             'orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#c0392b"/></marker></defs>']
    if title:
        parts.append(f'<text x="4" y="14" font-weight="bold">{escape(title)}</text>')
    for s in range(streams):
        y = TOP + s * LANE_H
        parts.append(f'<line x1="{LEFT - 6}" y1="{y + BOX_H / 2}" x2="{width - 4}" '
                     f'y2="{y + BOX_H / 2}" stroke="#ccc"/>')
        name = "origin" if s == 0 else f"stream {s}"
        parts.append(f'<text x="4" y="{y + BOX_H / 2 + 4}">{name}</text>')
    centers: dict[int, tuple[float, float]] = {}
    for i, op in enumerate(ops):
        x = LEFT + i * (BOX_W + GAP)
        y = TOP + op["stream"] * LANE_H
        centers[i] = (x, y)
        fill = "#fdebd0" if op["kind"] == "launch" else "#eaf2f8"
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
    for i, op in enumerate(ops):
        if op["kind"] == "record":
            record_at[op["event"]] = i
        elif op["kind"] == "wait" and op["event"] in record_at:
            (x1, y1), (x2, y2) = centers[record_at[op["event"]]], centers[i]
            parts.append(f'<line x1="{x1 + BOX_W}" y1="{y1 + BOX_H / 2}" x2="{x2}" '
                         f'y2="{y2 + BOX_H / 2}" stroke="#c0392b" stroke-dasharray="4,2" '
                         'marker-end="url(#arrow)"/>')
    if plan:
        parts.append(f'<text x="4" y="{height - 8}" fill="#333">{escape(plan)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
