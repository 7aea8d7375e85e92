"""Setup helpers shared by the extended-API spec modules."""

from __future__ import annotations

from typing import Any

from backends.contract import CaptureMode, CondHandleFlag, CondTaskParams, CondTaskType
from conformance import expect
from conformance.harness import Dev


def sub_model(dev: Dev) -> Any:
    """A captured IF sub-model (one ``fill`` kernel) of a parent capture left open (COND-06)."""
    s = dev.stream()
    dev.begin(s)
    m = dev.b.capture_get_info(s)[2]
    rc, h = dev.b.cond_handle_create(m, 0, CondHandleFlag.NONE)
    expect.ok(rc, "aclmdlRICondHandleCreate (setup)")
    rc, slots = dev.b.add_cond_task(CondTaskParams(h, CondTaskType.IF, 1, 1), s, 0)
    expect.ok(rc, "aclmdlRIAddCondTask (setup)")
    u = dev.stream()
    expect.ok(dev.b.capture_to_model_ri_begin(u, slots[0], CaptureMode.RELAXED),
              "aclmdlRICaptureToModelRIBegin (setup)")
    dev.launch("fill", u, out=dev.buffer(n=8), n=8, value=1)
    expect.ok(dev.b.capture_end(u, null_model=True)[0], "sub CaptureEnd (setup)")
    return slots[0]
