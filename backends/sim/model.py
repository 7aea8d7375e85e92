"""Capture models: internal streams, tasks, sequence ids, deferred update, execution plans.

* A :class:`SimModel` goes CAPTURE_ACTIVE -> READY (CaptureEnd) -> UPDATING (SetParams/Disable)
  -> READY (Update), or -> FAULT (failed SetParams/Disable, terminal) (semantics.md §0.3).
* Each participating user stream gets one internal :class:`ModelStream` (LIST-01). They are
  listed in reverse attachment order, the origin last (LIST-02).
* Every appended task, internal ones included, takes the model's next sequence id, starting
  at 0 (SEQ-01..07). Ids are never renumbered (SEQ-05).
* Every task keeps two records: ``host`` (what GetType/GetParams see; SetParams changes it at
  once, GETP-06, TYPE-07) and ``dev`` (what executions run; changed only by Update, SETP-01,
  UPD-05). Disabled tasks are dropped from their stream at Update (DIS-05); a stream emptied by
  that gets a NOP with a new id (DIS-07). Task handles survive Update (Q-23).
* ``faults`` (names from :mod:`backends.faults`, set by the backend) switch on injected
  bugs; the hooks are the ``in self.faults`` tests and :meth:`SimModel._fault_update_stream`.
* Each user event used in a capture maps to an internal :class:`ModelEvent` with its own device
  flag (GETP-04, Q-13).
"""

from __future__ import annotations

import dataclasses
import enum
import itertools
from dataclasses import dataclass
from typing import Any

from mdlri_conformance.backends.contract import TaskType

from .attributes import timeout_seconds
from .device import (EventState, KernelOp, MemcpyOp, MemsetOp, NopOp, Op, RecordOp, ResetOp,
                     ValueWaitOp, ValueWriteOp, WaitOp)
from .execution import TracedPlan
from .handles import Handle


class ModelStatus(enum.Enum):
    """Model states of the capture model (semantics.md §0.3)."""

    CAPTURE_ACTIVE = "capture_active"
    READY = "ready"
    UPDATING = "updating"
    FAULT = "fault"


@dataclass(eq=False)
class TaskRecord:
    """One version of a task's parameters. ``type`` is a :class:`TaskType` value.

    DEFAULT tasks carry ``default_kind`` ("memcpy" | "memset" | "nop") and the payload the
    device needs to run them (host buffers are kept by reference, read at execution, CAP-19).
    """

    type: int
    # kernel
    func: Any = None
    args_addr: int | None = None
    args_size: int = 0
    num_blocks: int = 0
    # event record / wait / reset
    event: "ModelEvent | None" = None
    event_flag: int = 0
    # value write / wait
    dev_addr: int | None = None
    value: int = 0
    flag: int = 0
    # DEFAULT payload
    default_kind: str = ""
    dst: Any = None
    src: Any = None
    count: int = 0
    fill: int = 0
    # shape info (SETP-16, DIS-10)
    op_info_ptr: Any = None
    op_info_size: int = 0
    # launch attributes {attr id: value} (backends.sim.attributes); None = none set
    attrs: Any = None
    # the runtime's typeName of an extension task (DebugJsonPrint, backends.sim.debugjson)
    trace: str = ""

    def replace(self, **changes: Any) -> "TaskRecord":
        return dataclasses.replace(self, **changes)


class ModelEvent(Handle):
    """The model-internal event a captured user event maps to (GETP-04)."""

    kind = "model-event"

    def __init__(self, user_event: Any, order: int) -> None:
        super().__init__()
        self.user_event = user_event
        self.flags = int(user_event.flags)
        self.order = order  # order of first capture (used for the CaptureEnd resets, Q-04)
        self.state = EventState()
        self.recorded = False  # recorded inside the capture (XS-06)


class Task(Handle):
    """An ``aclmdlRITask``: a listed entry of an internal model stream."""

    kind = "task"

    def __init__(self, model: "SimModel", stream: "ModelStream", seq_id: int,
                 record: TaskRecord) -> None:
        super().__init__()
        self.model = model
        self.stream = stream
        self.seq_id = seq_id
        self.task_id = next(stream.task_ids)  # the stream-local task id (DebugJsonPrint)
        self.host = record
        self._dev = record
        self.disabled = False

    @property
    def dev(self) -> TaskRecord:
        """The device record (what executions run; changed by Update and task-group
        updates)."""
        return self._dev

    @dev.setter
    def dev(self, record: TaskRecord) -> None:
        if record is not self._dev:
            self._dev = record
            self.model.plan_gen += 1  # the cached execution plan is stale

    @property
    def type(self) -> int:
        """The host-side type (what GetType reports, TYPE-07)."""
        return self.host.type


class ModelStream(Handle):
    """An internal capture stream of a model (LIST-01)."""

    kind = "model-stream"

    def __init__(self, model: "SimModel", user_stream: Any) -> None:
        super().__init__()
        self.model = model
        self.user_stream = user_stream
        self._tasks: list[Task] = []
        #: faults only: what executes when it differs from the listing (DIS-01, DIS-05)
        self.exec_override: list[Task] | None = None
        self.trace_override: list[Task] | None = None  # fault debug-json-keeps-disabled only
        self.emptied = False  # fault getstreams-drops-emptied-stream only
        self.local_seq = itertools.count(0)  # fault seq-per-stream only
        self.task_ids = itertools.count(0)

    @property
    def tasks(self) -> list[Task]:
        """The listed tasks, in order (mutated only through :meth:`SimModel.append`, replaced
        by Update: either makes the model's cached execution plan stale)."""
        return self._tasks

    @tasks.setter
    def tasks(self, tasks: list[Task]) -> None:
        self._tasks = tasks
        self.model.plan_gen += 1


class SimModel(Handle):
    """An ``aclmdlRI`` created by CaptureBegin."""

    kind = "model"

    def __init__(self) -> None:
        super().__init__()
        self.status = ModelStatus.CAPTURE_ACTIVE
        self.streams: list[ModelStream] = []  # attachment order
        self._seq = itertools.count(0)
        self.running = 0
        self.events: dict[Any, ModelEvent] = {}  # user event -> its current internal event
        #: every internal event of the capture, in creation order (the CaptureEnd resets)
        self.internal_events: list[ModelEvent] = []
        self.internal_allocs: list[int] = []  # device copies of kernel args owned by the model
        self.session: Any = None  # CaptureSession while capturing
        self.faults: frozenset[str] = frozenset()  # injected bugs (backends.faults)
        self.executions = 0
        self.external_events: set = set()  # user events used EXTERNAL in this graph (XS-10)
        #: bumped on every change of what an execution runs: a stream or task appended, a
        #: task list replaced (Update), a device record replaced (Update, task-group update)
        self.plan_gen = 0
        #: (plan_gen, number of streams, per-stream templates) of :meth:`execution_plan`
        self._plan_cache: Any = None

    # -- building ---------------------------------------------------------------------------
    def new_stream(self, user_stream: Any) -> ModelStream:
        """Attach a new internal stream (mirroring ``user_stream``)."""
        ms = ModelStream(self, user_stream)
        self.streams.append(ms)
        self.plan_gen += 1
        return ms

    def next_seq(self) -> int:
        return next(self._seq)

    def append(self, stream: ModelStream, record: TaskRecord) -> Task:
        """Append a task with the next sequence id (SEQ-01)."""
        seq = next(stream.local_seq) if "seq-per-stream" in self.faults else self.next_seq()
        task = Task(self, stream, seq, record)
        stream.tasks.append(task)
        self.plan_gen += 1
        return task

    def model_event(self, user_event: Any) -> ModelEvent:
        """The internal event ``user_event`` is bound to, created at its first capture."""
        me = self.events.get(user_event)
        return self.fresh_event(user_event) if me is None else me

    def fresh_event(self, user_event: Any) -> ModelEvent:
        """A new internal event, now the one ``user_event`` is bound to: a captured record of
        an event already recorded in this capture records a new internal event, and later
        waits take that one (XS-13, ``feature/aclgraph/v100/api_impl_capture_event.cc:136-149,
        67, 89-103``)."""
        me = ModelEvent(user_event, len(self.internal_events))
        self.events[user_event] = me
        self.internal_events.append(me)
        return me

    # -- listing ----------------------------------------------------------------------------
    def listed_streams(self) -> list[ModelStream]:
        """Streams in listing order: most recently attached first, origin last (LIST-02);
        Update keeps every stream, an emptied one included (DIS-11)."""
        if "getstreams-origin-first" in self.faults:
            return list(self.streams)
        if "getstreams-drops-emptied-stream" in self.faults:
            return [ms for ms in reversed(self.streams) if not ms.emptied]
        return list(reversed(self.streams))

    # -- update -----------------------------------------------------------------------------
    def commit_update(self) -> None:
        """Apply pending SetParams/Disable (UPD-02, DIS-05, DIS-07, SEQ-05)."""
        streams = self.streams[:1] if "update-first-stream-only" in self.faults else self.streams
        for ms in streams:
            before = len(ms.tasks)
            old = [(t, t.dev) for t in ms.tasks]
            kept: list[Task] = []
            for t in ms.tasks:
                if t.disabled:
                    t.alive = False
                else:
                    t.dev = t.host
                    kept.append(t)
            ms.tasks = kept
            if self.faults:
                self._fault_update_stream(ms, old)
            if before and not kept and "no-nop-for-emptied-stream" not in self.faults:
                self.append(ms, TaskRecord(TaskType.DEFAULT, default_kind="nop"))
                if "getstreams-drops-emptied-stream" in self.faults:
                    ms.emptied = True  # DIS-11 broken: GetStreams leaves it out
        if "seq-renumbered-after-update" in self.faults:
            ordered = sorted((t for ms in self.streams for t in ms.tasks), key=lambda t: t.seq_id)
            for i, t in enumerate(ordered):
                t.seq_id = i

    def _fault_update_stream(self, ms: ModelStream, old: list[tuple[Task, TaskRecord]]) -> None:
        """Injected Update bugs on one internal stream (faults only; DIS-01, DIS-05,
        SETP-07, SEQ-05, Q-23, DBG-06)."""
        f = self.faults
        if "value-write-old-value" in f:
            for t, dev in old:
                if t in ms.tasks and dev.type == t.dev.type == TaskType.VALUE_WRITE:
                    t.dev = t.dev.replace(value=dev.value)
        if "disabled-task-runs" in f:
            ms.exec_override = [t for t, _ in old]
        if "seq-new-on-convert" in f:
            for t, dev in old:
                if t in ms.tasks and dev.type != t.dev.type:
                    t.seq_id = self.next_seq()  # SEQ-05 broken: a converted task renumbered
        if "debug-json-keeps-disabled" in f:
            ms.trace_override = [t for t, _ in old]
        if "disabled-task-listed" in f:
            ms.exec_override = list(ms.tasks)
            ms.tasks = [t for t, _ in old]
            for t in ms.tasks:
                t.alive = True
        if "handles-renewed-by-update" in f:
            fresh = []
            for t in ms.tasks:
                n = Task(self, ms, t.seq_id, t.host)
                n.dev, n.disabled, t.alive = t.dev, t.disabled, False
                fresh.append(n)
            ms.tasks = fresh

    # -- execution --------------------------------------------------------------------------
    def execution_finished(self, ok: bool) -> None:
        """An execution of the model ended (``ExecuteOp.on_finish``): it no longer counts as
        running (LIFE-03)."""
        self.running -= 1

    def execution_plan(self) -> list[list[Op]]:
        """One op list per internal stream, from the device records (EXE-01, EXE-02).

        The ops that keep no state of their own between two runs (event, value, memcpy,
        memset, NOP ops, and kernels that never wait: each reads its task's device record,
        argument bytes and buffers when it runs) are made once and shared by every execution
        until :attr:`plan_gen` changes; the others (waiting kernels, extension tasks) are made
        fresh for each execution, in task order. A model with injected faults makes every op
        fresh. The returned lists must not be mutated (the engine copies them into queues)."""
        self.executions += 1
        if self.faults:
            return self._fresh_plan()
        cache = self._plan_cache  # the cached plan, without the call (every execution asks)
        if (cache is not None and cache[3] is not None and cache[0] == self.plan_gen
                and cache[1] == len(self.streams)):
            return cache[3]
        templates, traced = self.prepare_plan()
        if traced is not None:
            return traced
        plan = []
        for shared, fresh in templates:
            if fresh:
                ops = list(shared)
                for i, make, arg in fresh:
                    ops[i] = make(arg)
                plan.append(ops)
            else:
                plan.append(shared)
        return plan

    def prepare_plan(self, engine: Any = None
                     ) -> tuple[list[tuple[list[Op], list[tuple[int, Any, Any]]]],
                                TracedPlan | None]:
        """The per-stream templates of :meth:`execution_plan`, made again when the model
        changed since (:attr:`plan_gen`), and the plan itself as a :class:`TracedPlan` when
        every op is shared and blocks on nothing but this model's own events. CaptureEnd and
        Update call it, as the runtime builds a model's task streams when the model becomes
        READY, not at each launch; making it there or at the first execution runs the same
        ops. Given the ``engine`` (a simulator without injected faults), a
        :class:`TracedPlan` is also compiled for the flags the next start takes, its kernels'
        argument bytes decoded and their bodies prepared, as the first execution would."""
        cache = self._plan_cache
        if cache is None or cache[0] != self.plan_gen or cache[1] != len(self.streams):
            templates = [_stream_template(ms.tasks) for ms in self.streams]
            cache = self._plan_cache = (self.plan_gen, len(self.streams), templates,
                                        self._traced(templates))
        traced = cache[3]
        if traced is not None and engine is not None and not engine.injected:
            traced.compiled(traced.flags(), engine)
        return cache[2], traced

    def _traced(self, templates: list[tuple[list[Op], list[Any]]]) -> TracedPlan | None:
        """The templates as a :class:`TracedPlan`, or None when an op is made per execution,
        may wait on memory or another model's or a user's event, or is of any other kind."""
        own = {id(me.state) for me in self.internal_events}
        states: dict[int, EventState] = {}
        for shared, fresh in templates:
            if fresh:
                return None
            for op in shared:
                kind = type(op)
                if kind in _EVENT_OPS:
                    if id(op.state) not in own:
                        return None
                    states[id(op.state)] = op.state
                elif kind not in _TRACED_OPS:
                    return None
        plan = TracedPlan((shared for shared, _ in templates), states.values())
        plan.order(plan.flags())  # the order the next start takes
        return plan

    def _fresh_plan(self) -> list[list[Op]]:
        """Every op made fresh from the device records (a model with injected faults)."""
        plan = [[task_to_op(t) for t in
                 (ms.tasks if ms.exec_override is None else ms.exec_override)]
                for ms in self.streams]
        if "second-exec-skips-first-task" in self.faults and self.executions > 1 and plan[0]:
            plan[0].pop(0)
        if "event-wait-no-wait" in self.faults:
            plan = [[NopOp() if isinstance(op, WaitOp) else op for op in ops] for ops in plan]
        return plan

    def invalidate_handles(self) -> None:
        """Destroy: the model, its internal streams and tasks become invalid (LIFE-01)."""
        self.alive = False
        for ms in self.streams:
            ms.alive = False
            for t in ms.tasks:
                t.alive = False
        for me in self.internal_events:
            me.alive = False


class LiveKernelOp(Op):
    """A kernel task of an execution that reads the task's device record when it runs.

    A task-group update (TG-10) replaces a grouped kernel's device record from another
    stream while an execution is in flight; ordered by an event, the execution must run the
    new kernel when it reaches the task (S2 ``1_model_update``), not the record of the time
    the execution started.
    """

    label = "kernel"

    def __init__(self, task: "Task") -> None:
        super().__init__()
        self.task = task
        self._op: KernelOp | None = None  # made from the device record when it first runs

    def step(self, engine: Any, queue: Any) -> bool:
        if self._op is None:
            self._op = record_to_op(self.task.dev)
        return self._op.step(engine, queue)

    def deadline(self) -> float | None:
        return None if self._op is None else self._op.deadline()


class SharedKernelOp(LiveKernelOp):
    """The kernel task of a cached execution plan, shared by the executions of its model.

    Like :class:`LiveKernelOp` it reads the task's device record when it runs (TG-10); the
    kernel op of a record is kept while the record stays (records are replaced, never changed
    in place). A kernel that never waits completes or faults in one step and keeps no state,
    so one op serves every execution. When the record's kernel can wait (``wait_flag``, its
    start time is per execution) or the record is no kernel, a fresh :class:`LiveKernelOp`
    takes this op's place at the head of the queue and runs, exactly as an unshared op would."""

    def __init__(self, task: "Task") -> None:
        super().__init__(task)
        self._rec: TaskRecord | None = None
        self._plain = False  # _op is a KernelOp that never waits (no state of its own)

    def resolve(self, rec: TaskRecord) -> None:
        """Make the kernel op of device record ``rec`` (the plan does it for the record of
        the time it is made; :meth:`step` again whenever the record was replaced since)."""
        op = self._op = record_to_op(rec)
        self._rec = rec
        self._plain = type(op) is KernelOp and op.spec.ready is None

    check_stable = True

    def stable(self) -> bool:
        """Still the plain kernel of the task's current device record."""
        return self._plain and self.task._dev is self._rec

    def step(self, engine: Any, queue: Any) -> bool:
        rec = self.task._dev  # Task.dev without the property call
        if rec is not self._rec:
            self.resolve(rec)
        if self._plain:
            return self._op.step(engine, queue)
        live = LiveKernelOp(self.task)
        queue.ops[0] = live
        try:
            return live.step(engine, queue)
        except BaseException:
            queue.ops[0] = self  # the engine drops the head op it stepped
            raise

    def deadline(self) -> float | None:
        return None


def _stream_template(tasks: "list[Task]") -> tuple[list[Op], list[tuple[int, Any, Any]]]:
    """The shared ops of one stream's tasks and the (index, factory, argument) of the ops
    each execution makes fresh (see :meth:`SimModel.execution_plan`)."""
    shared: list[Op] = []
    fresh: list[tuple[int, Any, Any]] = []
    for i, t in enumerate(tasks):
        rec = t.dev
        if rec.type == _KERNEL:
            spec = getattr(rec.func, "spec", None)
            if spec is not None and getattr(spec, "ready", True) is None:
                op = SharedKernelOp(t)
                try:
                    op.resolve(rec)
                except Exception:  # noqa: BLE001 - left to the first run, as before
                    pass
                shared.append(op)
            else:
                shared.append(None)  # type: ignore[arg-type]
                fresh.append((i, LiveKernelOp, t))
        elif rec.type in _STATELESS_TYPES or rec.default_kind in _STATELESS_KINDS \
                or (rec.type not in _BY_TYPE and rec.default_kind not in _BY_DEFAULT_KIND):
            shared.append(record_to_op(rec))
        else:
            shared.append(None)  # type: ignore[arg-type]
            fresh.append((i, record_to_op, rec))
    return shared, fresh


def task_to_op(task: "Task") -> Op:
    """The device operation of a listed task in an execution (kernels resolve late)."""
    if task.dev.type == _KERNEL:
        return LiveKernelOp(task)
    return record_to_op(task.dev)


def _kernel_op(rec: TaskRecord) -> Op:
    return KernelOp(rec.func.spec, rec.args_addr, rec.args_size,
                    timeout_s=timeout_seconds(rec.attrs), num_blocks=rec.num_blocks)


_KERNEL = int(TaskType.KERNEL)
#: the op of a record by its task type (one dict lookup per executed task, not a chain of
#: enum comparisons); a type not listed here is a DEFAULT task, made by its default_kind
_BY_TYPE: dict[int, Any] = {
    _KERNEL: _kernel_op,
    int(TaskType.EVENT_RECORD): lambda rec: RecordOp(rec.event.state),
    int(TaskType.EVENT_WAIT): lambda rec: WaitOp(rec.event.state),
    int(TaskType.EVENT_RESET): lambda rec: ResetOp(rec.event.state),
    int(TaskType.VALUE_WRITE): lambda rec: ValueWriteOp(rec.dev_addr, rec.value),
    int(TaskType.VALUE_WAIT): lambda rec: ValueWaitOp(rec.dev_addr, rec.value, rec.flag),
}
_BY_DEFAULT_KIND: dict[str, Any] = {
    "memcpy": lambda rec: MemcpyOp(rec.dst, rec.src, rec.count),
    "memset": lambda rec: MemsetOp(rec.dst, rec.fill, rec.count),
    "ext": lambda rec: rec.src(),  # extension tasks (backends.sim.extended): src builds the op
    # external-event placeholders (backends.sim.external)
    "ext_record": lambda rec: RecordOp(rec.event.state),
    "ext_wait": lambda rec: WaitOp(rec.event.state),
}


#: task types and DEFAULT kinds whose ops keep no state between runs (shared by executions)
_STATELESS_TYPES = frozenset({int(TaskType.EVENT_RECORD), int(TaskType.EVENT_WAIT),
                              int(TaskType.EVENT_RESET), int(TaskType.VALUE_WRITE),
                              int(TaskType.VALUE_WAIT)})
_STATELESS_KINDS = frozenset({"memcpy", "memset", "ext_record", "ext_wait"})
#: the ops a TracedPlan may hold: event ops on the model's own events, ops that never block,
#: and value waits, which its order takes as satisfied and which hand the rest of the
#: execution to the engine when they are not
_EVENT_OPS = frozenset({RecordOp, WaitOp, ResetOp})
_TRACED_OPS = frozenset({NopOp, MemcpyOp, MemsetOp, ValueWriteOp, ValueWaitOp, SharedKernelOp})


def record_to_op(rec: TaskRecord) -> Op:
    """The device operation that runs one task record."""
    make = _BY_TYPE.get(rec.type)
    if make is None:
        make = _BY_DEFAULT_KIND.get(rec.default_kind)
        if make is None:
            return NopOp()
    return make(rec)
