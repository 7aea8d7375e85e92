"""The explicit build path (BLD): models built from bound PERSISTENT streams.

* :class:`BuiltModel` is a model made by BuildBegin. Each bound user stream gets an internal
  :class:`~backends.sim.model.ModelStream`; work issued on a bound stream is converted by
  :func:`op_to_record` into a task of that stream instead of running (BLD-03).
* GetStreams lists the bound *user* streams, most recently bound first (BLD-06).
* Only streams bound with ACL_MODEL_STREAM_FLAG_HEAD run when the model executes; DEFAULT-flag
  streams wait for an ``aclrtActiveStream`` the contract does not offer, so they never run.
* EndTask appends the end-graph marker (a DEFAULT NOP) and is required before any execution
  (EXE-12: 507011 otherwise).
"""

from __future__ import annotations

from typing import Any

from backends.contract import ModelStreamFlag, TaskType

from .device import (
    KernelOp,
    MemcpyOp,
    MemsetOp,
    Op,
    RecordOp,
    ResetOp,
    ValueWaitOp,
    ValueWriteOp,
    WaitOp,
)
from .model import ModelStatus, ModelStream, SimModel, TaskRecord, record_to_op


class UserEventRef:
    """The event of an event task stored in a built model: the user event's device flag."""

    def __init__(self, state: Any) -> None:
        self.state = state
        self.flags = 0

    def __repr__(self) -> str:
        return "<sim built-model event ref>"


class BuiltModel(SimModel):
    """An ``aclmdlRI`` created by BuildBegin (not a capture model)."""

    def __init__(self) -> None:
        super().__init__()
        self.status = ModelStatus.READY
        self.build_ended = False
        self.has_end_task = False

    def bind(self, user_stream: Any, flag: int) -> ModelStream:
        ms = self.new_stream(user_stream)
        ms.bind_flag = int(flag)
        return ms

    def listed_streams(self) -> list[Any]:
        """The bound user streams, most recently bound first (BLD-06)."""
        return [ms.user_stream for ms in reversed(self.streams)]

    def execution_plan(self) -> list[list[Op]]:
        """Only HEAD-bound streams run (DEFAULT-flag streams are never activated)."""
        self.executions += 1
        return [[record_to_op(t.dev) for t in ms.tasks] for ms in self.streams
                if getattr(ms, "bind_flag", 0) == ModelStreamFlag.HEAD]


def op_to_record(op: Op) -> TaskRecord:
    """The stored task for a device op issued on a bound stream (BLD-03)."""
    if isinstance(op, MemcpyOp):
        return TaskRecord(TaskType.DEFAULT, default_kind="memcpy", dst=op.dst, src=op.src,
                          count=op.count)
    if isinstance(op, MemsetOp):
        return TaskRecord(TaskType.DEFAULT, default_kind="memset", dst=op.dst, fill=op.value,
                          count=op.count)
    if isinstance(op, RecordOp):
        return TaskRecord(TaskType.EVENT_RECORD, event=UserEventRef(op.state))
    if isinstance(op, WaitOp):
        return TaskRecord(TaskType.EVENT_WAIT, event=UserEventRef(op.state))
    if isinstance(op, ResetOp):
        return TaskRecord(TaskType.EVENT_RESET, event=UserEventRef(op.state))
    if isinstance(op, ValueWriteOp):
        return TaskRecord(TaskType.VALUE_WRITE, dev_addr=op.addr, value=op.value)
    if isinstance(op, ValueWaitOp):
        return TaskRecord(TaskType.VALUE_WAIT, dev_addr=op.addr, value=op.value, flag=op.flag)
    if isinstance(op, KernelOp):  # pragma: no cover - launches are stored by the launch hook
        raise TypeError("kernel launches on bound streams are stored by the launch hook")
    return TaskRecord(TaskType.DEFAULT, default_kind="nop")
