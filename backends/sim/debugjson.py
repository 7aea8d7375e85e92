"""aclmdlRIDebugJsonPrint: the runtime's Chrome-trace writer, reproduced (DBG-01, DBG-05).

The real writer (``core/src/stream/stream.cc:5090-5180``, one object per task from
``TraceEventToJson`` ``:4980-5017``; the file frame ``feature/aclgraph/model_aclgraph.cc:50-80``)
prints ``[``, then for each model stream in model order its tasks, one JSON object per line,
each followed by ``,`` unless it is the last task of the last stream, then ``]``. Keys, in
order: ``name``, ``pid`` ("<pid> aclGraph"), ``tid`` ("stream<id>"), ``ts`` (cumulative per
stream: NOP 1, a type with RECORD 5, with WAIT 15, else 10), ``dur`` (0.5 / 4.5 / 14.5 / 9.5),
``ph`` ("X") and ``args`` with ``"Model Id"``, ``"Stream Id"``, ``"Task Id"``, ``"Task Type"``
(the runtime's typeName), ``"Active Stream Id"`` for STREAM_ACTIVE, and for kernels
``"Numblocks"`` and ``"Schem Mode"``, plus ``"Kernel Args"`` (the argument block as 64-bit hex
words) and ``"Kernel Args Size"`` with the VERBOSE flag. ``name`` is the kernel's name for a
kernel, else the type name, with ``_<event id>`` for event tasks and ``_<address>`` for value
tasks. Like the real writer, a last stream without tasks leaves a trailing comma.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mdlri_conformance.backends.contract import LaunchAttrId, TaskType

_TYPE_NAMES = {
    TaskType.KERNEL: "KERNEL_AICORE",
    TaskType.EVENT_RECORD: "EVENT_RECORD",
    TaskType.EVENT_WAIT: "EVENT_WAIT",
    TaskType.EVENT_RESET: "EVENT_RESET",
    TaskType.VALUE_WRITE: "MEM_WRITE_VALUE",
    TaskType.VALUE_WAIT: "MEM_WAIT_VALUE",
}
_DEFAULT_NAMES = {
    "memcpy": "MEMCPY_ASYNC",
    "memset": "MEMSET_ASYNC",
    "nop": "NOP",
    "ext_record": "CAPTURE_RECORD_EXTERNAL",
    "ext_wait": "CAPTURE_WAIT_EXTERNAL",
}
#: (dur, ts step) per kind of type name (stream.hpp:37-40, 62-65)
_NOP, _RECORD, _WAIT, _OTHER = (0.5, 1), (4.5, 5), (14.5, 15), (9.5, 10)


def type_name(rec: Any) -> str:
    """The runtime's ``typeName`` of a task record."""
    if rec.type in _TYPE_NAMES:
        return _TYPE_NAMES[TaskType(rec.type)]
    return rec.trace or _DEFAULT_NAMES.get(rec.default_kind, "NOP")


def _timing(ttype: str) -> tuple[float, int]:
    if ttype == "NOP":
        return _NOP
    if "RECORD" in ttype:
        return _RECORD
    if "WAIT" in ttype:
        return _WAIT
    return _OTHER


def _name(rec: Any, ttype: str) -> str:
    if rec.type == TaskType.KERNEL:
        return rec.func.spec.name
    ev_id = getattr(rec.event, "id", None) if rec.event is not None else None
    if ev_id is not None:
        return f"{ttype}_{ev_id}"
    if rec.type in (TaskType.VALUE_WRITE, TaskType.VALUE_WAIT) and rec.dev_addr is not None:
        return f"{ttype}_{rec.dev_addr}"
    return ttype


def _kernel_args(mem: Any, rec: Any) -> str:
    raw = mem.read(rec.args_addr, rec.args_size).tobytes()
    words = [int.from_bytes(raw[i:i + 8], "little") for i in range(0, len(raw) - 7, 8)]
    return " ".join(f"0x{w:016x}" for w in words)


def _stream_id(model: Any, ms: Any) -> int:
    user = getattr(ms, "user_stream", None)
    # a built model's streams are the bound user streams themselves
    return user.id if getattr(ms, "bind_flag", None) is not None and user is not None else ms.id


def _record(model: Any, ms: Any, task: Any, ts: int, mem: Any, verbose: bool) -> tuple[str, int]:
    rec = task.host
    ttype = type_name(rec)
    dur, step = _timing(ttype)
    sid = _stream_id(model, ms)
    args: list[tuple[str, Any]] = [("Model Id", model.id), ("Stream Id", sid),
                                   ("Task Id", task.task_id), ("Task Type", ttype)]
    if ttype == "STREAM_ACTIVE":
        target = getattr(rec.src(), "target", None) if rec.src is not None else None
        args.append(("Active Stream Id", getattr(target, "id", -1)))
    if rec.type == TaskType.KERNEL:
        args.append(("Numblocks", int(rec.num_blocks)))
        args.append(("Schem Mode", int((rec.attrs or {}).get(LaunchAttrId.SCHEM_MODE, 0)) & 0xFF))
        if verbose and rec.args_size:
            args.append(("Kernel Args", _kernel_args(mem, rec)))
            args.append(("Kernel Args Size", int(rec.args_size)))
    body = ",".join(f"{json.dumps(k)}:{json.dumps(v)}" for k, v in args)
    text = (f'{{"name":{json.dumps(_name(rec, ttype))},'
            f'"pid":{json.dumps(f"{os.getpid()} aclGraph")},"tid":"stream{sid}",'
            f'"ts":{ts},"dur":{dur},"ph":"X","args":{{{body}}}}}')
    return text, ts + step


def _traced(model: Any, ms: Any) -> list[Any]:
    """The tasks the trace shows for one stream: its task list as it stands, a task disabled
    since the last Update included (Update removes it, DBG-06,
    ``core/src/stream/stream.cc:3602-3605, 5135``)."""
    faults = getattr(model, "faults", ())
    if getattr(ms, "trace_override", None) is not None:
        return list(ms.trace_override)  # fault debug-json-keeps-disabled
    if "debug-json-hides-pending-disabled" in faults:
        return [t for t in ms.tasks if not getattr(t, "disabled", False)]
    return list(ms.tasks)


def debug_json(model: Any, mem: Any, verbose: bool) -> str:
    """The file aclmdlRIDebugJsonPrint writes for ``model`` (a capture or built model)."""
    out = ["[\n"]
    streams = list(model.streams)
    for si, ms in enumerate(streams):
        last_stream = si == len(streams) - 1
        ts = 0
        tasks = _traced(model, ms)
        for ti, task in enumerate(tasks):
            text, ts = _record(model, ms, task, ts, mem, verbose)
            comma = "," if (ti < len(tasks) - 1 or not last_stream) else ""
            out.append(f"{text}{comma}\n")
    out.append("]")
    return "".join(out)


__all__ = ["debug_json", "type_name"]
