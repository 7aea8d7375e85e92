"""The explicit build path (BLD): models built from bound PERSISTENT streams.

* :class:`BuiltModel` is a model made by BuildBegin. Each bound user stream gets an internal
  :class:`~backends.sim.model.ModelStream`; work issued on a bound stream is converted by
  :func:`op_to_record` into a task of that stream instead of running (BLD-03).
* GetStreams lists the bound *user* streams, most recently bound first (BLD-06).
* Only streams bound with ACL_MODEL_STREAM_FLAG_HEAD run from the start of an execution;
  a DEFAULT-flag stream runs once an ``aclrtActiveStream`` / ``aclrtSwitchStream`` /
  ``aclrtSwitchLabelByIndex`` task of that execution activates it (:mod:`backends.sim.switch`);
  one never activated does not run, and the execution ends without it.
* EndTask appends the end-graph marker (a DEFAULT task) and is required before any execution
  (EXE-12: 507011 otherwise). When it runs, the execution ends: what is still queued on the
  model's other streams is dropped.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import ModelStreamFlag, TaskType

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

    def execution_plan(self) -> "BuiltPlan":
        """One op list per bound stream; HEAD streams start, the others wait (``heads``)."""
        self.executions += 1
        return BuiltPlan([[record_to_op(t.dev) for t in ms.tasks] for ms in self.streams],
                         list(self.streams))


class BuiltPlan(list):
    """A built model's execution plan: op lists in bind order, plus ``streams`` (the
    :class:`ModelStream` of each list) and ``heads`` (which of them run from the start)."""

    def __init__(self, op_lists: list[list[Op]], streams: list[ModelStream]) -> None:
        super().__init__(op_lists)
        self.streams = streams
        self.heads = [getattr(ms, "bind_flag", 0) == ModelStreamFlag.HEAD for ms in streams]

    def index_of(self, user_stream: Any) -> int | None:
        """The plan index of bound ``user_stream`` (None when it is not in this model)."""
        for i, ms in enumerate(self.streams):
            if ms.user_stream is user_stream:
                return i
        return None


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
