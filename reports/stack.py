"""How a run names the stack it tested: the backend, the runtime library, its version and the
device below it (``summary["stack"]``), in one line for the verdict and every report."""

from __future__ import annotations

from typing import Any


def stack_text(summary: dict[str, Any]) -> str:
    """``B: RUNTIME, VERSION, device: DEVICE``; the backend name alone when the run recorded
    no stack, ``not recorded`` when it recorded no backend either."""
    backend = summary.get("backend") or "not recorded"
    stack = summary.get("stack")
    if not isinstance(stack, dict) or not stack:
        return str(backend)
    text = ", ".join(str(stack[k]) for k in ("runtime", "version") if stack.get(k))
    return f"{backend}: {text}, device: {stack.get('device') or 'not reported'}"
