"""Stream activation, stream switch and labels on a built model's bound streams.

The CANN ``2_model_switch`` and ``label/0_simple_label`` examples (scenarios.md S3, S8) build
a model by hand and branch inside it at run time:

* ``aclrtActiveStream(activeStream, stream)``: a task of bound ``stream``; when it runs, bound
  ``activeStream`` (normally bound with ACL_MODEL_STREAM_FLAG_DEFAULT, so it waits) starts
  running in parallel with ``stream``. Activating a stream that already started in this
  execution does nothing.
* ``aclrtSwitchStream(left, cond, right, dataType, trueStream, falseStream, stream)``: a task of
  ``stream``; when it runs it compares the signed INT32 / INT64 device values ``*left`` and
  ``*right`` with ``cond`` (EQUAL 0 ... LESS_OR_EQUAL 5). When that holds, ``trueStream`` is
  activated and the rest of ``stream`` stops; otherwise ``stream`` goes on. ``falseStream``
  is reserved and must be NULL.
* Labels: ``aclrtSetLabel(label, stream)`` marks the position of bound ``stream`` where the
  next task will go (a DEFAULT marker task); ``aclrtSwitchLabelByIndex(ptr, maxValue, list,
  stream)`` reads the uint32 at ``ptr`` when it runs (an index past the last label selects the
  last one), continues at that label's position (on the label's stream, which is started
  there) and stops the rest of ``stream``.
* ``aclmdlRIEndTask``: when the end-graph task runs, the execution ends; what is still queued
  on the model's other streams is dropped.

Each of these is stored as one DEFAULT task (listed by GetTasksByStream). Only bound streams
take them: an unbound ``stream`` or target returns 107005 for ActiveStream, SwitchStream,
SwitchLabelByIndex and SetLabel (BLD-09), a NULL handle or pointer 100000, a destroyed handle
107017 (the API: :mod:`backends.sim.api.switch`). At most 65,535 labels are live at once
(RT-40). This module is the run-time side: it works on the
:class:`~backends.sim.execution.ExecuteOp` of the execution (its queue group) and the model's
:class:`~backends.sim.build.BuiltPlan`.
"""

from __future__ import annotations

from typing import Any

from mdlri_conformance.backends.contract import CompareDataType, Condition, TaskType

from .device import DeviceFault, Op, Queue
from .execution import ExecuteOp
from .handles import Handle
from .model import ModelStream, TaskRecord, record_to_op

#: aclrtCreateLabelList: num in (0, MAX_LABELS] (RT-41)
MAX_LABELS = 65535
#: live labels of aclrtCreateLabel at once: the runtime's one allocator hands out the ids
#: [0, 0xFFFF), so the 65,536th live label is refused (RT-40)
MAX_LABEL_IDS = 0xFFFF


# ---------------------------------------------------------------------------------------------
# handles


class Label(Handle):
    """An ``aclrtLabel``; ``task`` is its marker task once aclrtSetLabel placed it."""

    kind = "label"

    def __init__(self) -> None:
        super().__init__()
        self.task: Any = None
        #: in a label list: the runtime's devDstAddr_, set once and never cleared (RT-38)
        self.listed = False


class LabelList(Handle):
    """An ``aclrtLabelList``: the labels in list order."""

    kind = "label-list"

    def __init__(self, labels: list[Label]) -> None:
        super().__init__()
        self.labels = list(labels)


# ---------------------------------------------------------------------------------------------
# device side


def _execution(queue: Queue, what: str) -> ExecuteOp:
    ex = queue.group
    if not isinstance(ex, ExecuteOp) or not hasattr(ex.plan, "heads"):
        raise DeviceFault(f"{what} outside the execution of a built model")
    return ex


def _drop(q: Queue, keep: int = 0) -> None:
    """Drop the ops of ``q`` after its first ``keep`` (they never run)."""
    while len(q.ops) > keep:
        op = q.ops.pop()
        op.finish()
        op.done = True


def _start_at(engine: Any, ex: ExecuteOp, index: int, ops: list[Op]) -> None:
    q = ex.queues[index]
    _drop(q)
    q.ops.extend(ops)
    ex.active.add(index)
    if q.ops:
        engine.attach(q)


class ActiveOp(Op):
    """aclrtActiveStream while an execution runs it."""

    label = "active_stream"

    def __init__(self, target: Any) -> None:
        super().__init__()
        self.target = target

    def step(self, engine: Any, queue: Queue) -> bool:
        ex = _execution(queue, "aclrtActiveStream")
        index = ex.plan.index_of(self.target)
        if index is None:
            raise DeviceFault("aclrtActiveStream: the stream is no longer bound to the model")
        ex.activate(engine, index)
        return True


def compare(left: int, cond: int, right: int) -> bool:
    """``left <cond> right`` (aclrtCondition)."""
    return {
        Condition.EQUAL: left == right,
        Condition.NOT_EQUAL: left != right,
        Condition.GREATER: left > right,
        Condition.GREATER_OR_EQUAL: left >= right,
        Condition.LESS: left < right,
        Condition.LESS_OR_EQUAL: left <= right,
    }[Condition(cond)]


class SwitchOp(Op):
    """aclrtSwitchStream while an execution runs it."""

    label = "switch_stream"

    def __init__(self, left: int, cond: int, right: int, data_type: int, target: Any) -> None:
        super().__init__()
        self.left, self.cond, self.right = left, cond, right
        self.width = 4 if data_type == CompareDataType.INT32 else 8
        self.target = target

    def _read(self, engine: Any, addr: int) -> int:
        return int.from_bytes(engine.mem.read(addr, self.width).tobytes(), "little", signed=True)

    def step(self, engine: Any, queue: Queue) -> bool:
        ex = _execution(queue, "aclrtSwitchStream")
        if not compare(self._read(engine, self.left), self.cond,
                       self._read(engine, self.right)):
            return True
        index = ex.plan.index_of(self.target)
        if index is None:
            raise DeviceFault("aclrtSwitchStream: the stream is no longer bound to the model")
        ex.activate(engine, index)
        _drop(queue, keep=1)  # the rest of this stream stops
        return True


class LabelOp(Op):
    """The marker task of aclrtSetLabel (does nothing when it runs)."""

    label = "label"

    def step(self, engine: Any, queue: Queue) -> bool:
        return True


class SwitchLabelOp(Op):
    """aclrtSwitchLabelByIndex while an execution runs it."""

    label = "switch_label"

    def __init__(self, ptr: int, max_value: int, labels: list[Label]) -> None:
        super().__init__()
        # an index >= maxValue goes to the last label; maxValue 0 or past the list: the list
        bound = len(labels) if max_value == 0 else min(max_value, len(labels))
        self.ptr, self.labels = ptr, labels[:bound]

    def step(self, engine: Any, queue: Queue) -> bool:
        ex = _execution(queue, "aclrtSwitchLabelByIndex")
        index = int.from_bytes(engine.mem.read(self.ptr, 4).tobytes(), "little")
        label = self.labels[min(index, len(self.labels) - 1)]
        task = label.task
        if task is None or not task.alive:
            raise DeviceFault("aclrtSwitchLabelByIndex: the selected label is not set")
        ms: ModelStream = task.stream
        target = next((i for i, s in enumerate(ex.plan.streams) if s is ms), None)
        if target is None:
            raise DeviceFault("aclrtSwitchLabelByIndex: the label is on another model")
        pos = next(i for i, t in enumerate(ms.tasks) if t is task)
        ops = [record_to_op(t.dev) for t in ms.tasks[pos:]]
        if ex.queues[target] is queue:
            _drop(queue, keep=1)
            queue.ops.extend(ops)
        else:
            _drop(queue, keep=1)
            _start_at(engine, ex, target, ops)
        return True


class EndOp(Op):
    """The end-graph task of aclmdlRIEndTask: ends the execution."""

    label = "end_graph"

    def step(self, engine: Any, queue: Queue) -> bool:
        ex = queue.group
        if isinstance(ex, ExecuteOp) and ex.queues is not None:
            for q in ex.queues:
                _drop(q, keep=1 if q is queue else 0)
        return True


def end_record() -> TaskRecord:
    """The stored end-graph task (a DEFAULT task, Q-02)."""
    return TaskRecord(TaskType.DEFAULT, default_kind="ext", src=EndOp, trace="MODEL_END_GRAPH")


__all__ = ["ActiveOp", "EndOp", "Label", "LabelList", "LabelOp", "MAX_LABELS", "MAX_LABEL_IDS",
           "SwitchLabelOp", "SwitchOp", "compare", "end_record"]
