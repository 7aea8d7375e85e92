"""Replay a task-graph case on any backend through the contract; report divergences.

:func:`replay` turns a :class:`~conformance.engine.graphs.Case` into the observation list of
:mod:`conformance.engine.observe`:

1. Setup: one device allocation per buffer (initial values written) and per word, one
   ``aclrtMallocHost`` buffer per pinned host buffer, one user stream per case stream, one
   ``aclrtCreateEventExWithFlag(SYNC)`` event per case event (XS-04), the catalog binary
   from ``backend.kernel_binary_path()``, a task-update stream when the plan updates a task
   group (TG-10, TG-11), and every built model (BuildBegin, a persistent stream bound with
   HEAD, its launches, EndTask, BuildEnd: BLD-01/02/03/05).
2. Capture on each model's origin stream in RELAXED mode (CAP-01), begun right before the
   model's first op and ended right after its last (models captured in turn or together,
   CAP-07); side streams join through the case's record/wait ops (XS-01, XS-02). The
   capture rc is the first non-zero rc of the setup and capture calls; a pageable copy is
   issued with ordinary numpy host memory and its rc observed (MODE-14).
3. Listing of every model after the capture and of a model after each of its successful
   Updates (LIST-01, LIST-08, SEQ-03, SEQ-04, SEQ-05): one
   :class:`conformance.engine.listing.TaskMap` per model matches listed tasks to ops by
   their signatures (:mod:`conformance.engine.signature`).
4. The plan, step by step (SETP-01, DIS-01, UPD-05, EXE-02, TMO-01/02/03/06), every API
   error becoming an observation; every model executes on stream 0 (EXE-01) and a Sync
   reads back every buffer, word and pinned host buffer. In a case whose executions can
   block on a value wait (:func:`conformance.engine.case_facts.may_block`), syncs and
   stream queries run with a host deadline (:mod:`conformance.engine.deadline`): one that
   does not return is observed as such and ends the plan; an expired sync is observed with
   whether it waited 90 % of its timeout (a lower bound, never a speed check).

:func:`replay` returns a :class:`Replayed` list that also says where a call first answered
207000 / 207019 (``contract.NOT_SUPPORTED_CODES``); :func:`compare` reports a difference at
or after that point as unsupported (``Divergence.unsupported``), never as a divergence, and
judges buffer and word contents only where the backend moves data (and runs kernels, for
cases with kernels, and blocks on waits, for cases with waits): :func:`judgeable`.

Cleanup always runs (host stores that release blocked waits, timed sync, destroy, frees),
and nothing waits longer than a step's timeout plus its deadline. :class:`Divergence` and
:func:`divergence_message` format a mismatch with the case JSON and a command that replays
it without Hypothesis.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, UNWRITTEN, Backend, Cap, CaptureMode, CaptureStatus, CondHandleFlag,
    CondTaskParams, CondTaskType, Err, EventFlag, MemcpyKind, ModelStreamFlag, StreamFlag,
    TaskParams, TaskType, ValueWriteTaskParams, EventRecordTaskParams, EventWaitTaskParams,
    EventResetTaskParams, err_name,
)
from mdlri_conformance.backends.task_params import kernel_task_params

from . import deadline
from . import graphs
from .graphs import (WORD_MASK, Case, Cond, Copy, EndOnSide, GroupBegin, GroupEnd, Launch, Memset,
                     Op, OutsideWait, PageableCopy, Record, StrayWait, ValueWait, ValueWrite,
                     Wait, pack_launch)
from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    Query, SetBadType, SetCond, SetKernel, SetValue, Step, Sync, Update)
from .case_facts import may_block
from .listing import TaskMap
from .observe import Difference, Observation, first_difference

#: timed sync used by cleanup (ms): bounded, so a hanging model cannot hang the suite
CLEANUP_SYNC_MS = 2000
#: how long past its own timeout a bounded sync (or a query) may take before it counts as
#: not returning: generous, so a loaded machine never turns a slow answer into a divergence
DEADLINE_SLACK_S = 3.0
#: the slack once the backend has already left a call hanging in this process: its
#: divergence is established, and Hypothesis's shrinking should not cost seconds per replay
HUNG_SLACK_S = 0.3
#: an expired sync must have waited at least this share of its timeout (TMO-01)
WAITED_SHARE = 0.9
#: how long Destroy of a running model polls before 107037 (LIFE-03: 10000 checks 1 ms apart)
DESTROY_POLL_S = 10.0
#: backends that left a bounded call hanging (held weakly)
_hung: "weakref.WeakSet[Any]" = weakref.WeakSet()
PROG = "mdlri-conformance"


class Replayed(list):  # type: ignore[type-arg]
    """The observations of a replay, plus where a call first answered 207000 / 207019:
    ``unsupported_at`` (the index of the first observation made at or after that call, or
    None) and ``unsupported`` (the call and its code)."""

    unsupported_at: int | None = None
    unsupported: str = ""


class _Abort(Exception):
    """Internal: a setup or capture call failed with this rc."""

    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = rc


# ---------------------------------------------------------------------------------------------
# resources


@dataclass
class _Replay:
    """Everything one replay created, for the run and for cleanup."""

    b: Backend
    case: Case
    buf_addr: list[int] = field(default_factory=list)
    word_addr: list[int] = field(default_factory=list)
    streams: list[Any] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)
    binary: Any = None
    outside: Any = None                                        # the event recorded pre-capture
    funcs: dict[str, Any] = field(default_factory=dict)
    hosts: list[np.ndarray] = field(default_factory=list)     # pinned host buffers (uint8)
    pageable: list[np.ndarray] = field(default_factory=list)  # host memory of pageable copies
    models: list[Any] = field(default_factory=list)           # per case model, None until made
    capturing: set[int] = field(default_factory=set)          # models whose capture is open
    current: dict[int, Op] = field(default_factory=dict)       # ops with committed SetParams
    pending: dict[int, Op] = field(default_factory=dict)       # SetParams awaiting Update
    disabling: set[int] = field(default_factory=set)           # Disables awaiting Update
    removed: set[int] = field(default_factory=set)             # ops removed by an Update
    groups: list[Any] = field(default_factory=list)            # task-group handles (TG-01)
    grouped: dict[int, int] = field(default_factory=dict)      # op index -> its group
    updater: Any = None                                        # the task-update stream (TG-10)
    built: list[Any] = field(default_factory=list)             # built models (BLD-03)
    cond_ptr: dict[int, int] = field(default_factory=dict)     # Cond op -> its value's address
    sub_streams: list[Any] = field(default_factory=list)       # sub-model capture streams
    bound: list[Any] = field(default_factory=list)             # their persistent streams
    stuck: bool = False                                        # a bounded call never returned
    met: list[str] = field(default_factory=list)               # not-supported answers
    maps: list[TaskMap] = field(init=False)                    # per model: op <-> task
    op_model: list[int] = field(init=False)                    # the model of every op

    def __post_init__(self) -> None:
        # the maps share the address lists and kernel handles that setup() fills in
        self.maps = [TaskMap(self.b, self.case, self.buf_addr, self.word_addr, self.funcs,
                             self.note, model=m) for m in range(self.case.models)]
        self.op_model = graphs.op_models(self.case)
        self.models = [None] * self.case.models
        self.grouped = graphs.grouped_ops(self.case)

    @property
    def tasks(self) -> TaskMap:
        """Model 0's task map."""
        return self.maps[0]

    def task_of(self, op: int) -> Any:
        """The task handle mapped to op ``op`` (None when unmapped)."""
        if not 0 <= op < len(self.op_model) or self.op_model[op] < 0:
            return None
        return self.maps[self.op_model[op]].op_task.get(op)

    def note(self, rc: Any, call: str) -> Any:
        """Remember a 207000 / 207019 answer of ``call``; returns ``rc``."""
        if rc in NOT_SUPPORTED_CODES:
            self.met.append(f"{call} returned {err_name(rc)}")
        return rc

    # -- calls that must succeed during setup/capture --------------------------------------
    def ok(self, rc: int, call: str = "a setup or capture call") -> None:
        if rc != Err.SUCCESS:
            self.note(rc, call)
            raise _Abort(int(rc))

    def setup(self) -> None:
        """Allocate and initialise buffers and words, create streams and events, load kernels."""
        for values in self.case.buffers:
            arr = np.asarray(values, dtype=np.int64).astype(np.int32)
            rc, addr = self.b.malloc(max(arr.nbytes, 4))
            self.ok(rc)
            self.buf_addr.append(int(addr))
            self.ok(self.b.memcpy(int(addr), arr.nbytes, arr, arr.nbytes,
                                  MemcpyKind.HOST_TO_DEVICE))
        for value in self.case.words:
            rc, addr = self.b.malloc(64)
            self.ok(rc)
            self.word_addr.append(int(addr))
            self.write_word(int(addr), value)
        for values in self.case.hosts:
            arr = np.asarray(values, dtype=np.int64).astype(np.int32)
            rc, host = self.b.malloc_host(max(arr.nbytes, 4))
            self.ok(rc)
            self.hosts.append(host)
            self.host_view(len(self.hosts) - 1)[:] = arr
        for _ in range(self.case.streams):
            rc, s = self.b.create_stream()
            self.ok(rc)
            self.streams.append(s)
        for _ in range(self.case.events):
            rc, e = self.b.create_event_ex_with_flag(EventFlag.SYNC)
            self.ok(rc)
            self.events.append(e)
        if any(isinstance(op, OutsideWait) for op in self.case.ops):
            # XS-05: an event recorded outside the capture, before it begins
            rc, e = self.b.create_event_ex_with_flag(EventFlag.SYNC)
            self.ok(rc)
            self.events.append(e)
            self.outside = e
            self.ok(self.b.record_event(e, self.streams[0]))
            self.ok(self.b.synchronize_stream_with_timeout(self.streams[0], CLEANUP_SYNC_MS))
        kernels = {op.kernel for op in self.case.ops if isinstance(op, Launch)}
        kernels |= {s.kernel for s in self.case.plan if isinstance(s, SetKernel) and s.kernel}
        kernels |= {k for s in self.case.plan if isinstance(s, GroupUpdate) for k in s.kernels}
        kernels |= {op.kernel for ops in self.case.builds for op in ops}
        kernels |= {x.kernel for op in self.case.ops if isinstance(op, Cond)
                    for ops in op.branches for x in ops}
        if kernels:
            rc, h = self.b.binary_load_from_file(self.b.kernel_binary_path(), None)
            self.ok(rc)
            self.binary = h
            for name in sorted(kernels):
                rc, f = self.b.binary_get_function(h, name)
                self.ok(rc)
                self.funcs[name] = f
        if any(isinstance(step, GroupUpdate) for step in self.case.plan):
            rc, u = self.b.create_stream()
            self.ok(rc)
            self.updater = u
        for ops in self.case.builds:
            self.build(ops)

    def build(self, ops: list[Launch]) -> None:
        """A built model: BuildBegin(0) (BLD-01), a new ACL_STREAM_PERSISTENT stream bound
        with HEAD (BLD-02), its launches issued on it (stored, not run, BLD-03), EndTask,
        BuildEnd(reserve NULL) (BLD-05); each call must succeed."""
        rc, model = self.b.build_begin(0)
        self.ok(rc, "aclmdlRIBuildBegin")
        self.built.append(model)
        rc, s = self.b.create_stream_with_config(0, StreamFlag.PERSISTENT)
        self.ok(rc, "aclrtCreateStreamWithConfig(PERSISTENT)")
        self.bound.append(s)
        self.ok(self.b.bind_stream(model, s, ModelStreamFlag.HEAD), "aclmdlRIBindStream")
        for op in ops:
            self.ok(self.launch(op, s), "aclrtLaunchKernelWithHostArgs (bound stream)")
        self.ok(self.b.end_task(model, s), "aclmdlRIEndTask")
        self.ok(self.b.build_end(model, None), "aclmdlRIBuildEnd")

    def host_view(self, h: int) -> np.ndarray:
        """Pinned host buffer ``h`` as int32 values (a view of the aclrtMallocHost memory)."""
        return self.hosts[h][:4 * len(self.case.hosts[h])].view(np.int32)

    def store_word(self, addr: int, value: int) -> int:
        """Synchronous aclrtMemcpy(HOST_TO_DEVICE) of a 64-bit value; its rc."""
        arr = np.array([int(value) & WORD_MASK], dtype=np.uint64)
        return int(self.b.memcpy(addr, 8, arr, 8, MemcpyKind.HOST_TO_DEVICE))

    def write_word(self, addr: int, value: int) -> None:
        self.ok(self.store_word(addr, value))

    def launch(self, op: Launch, stream: Any) -> int:
        """aclrtLaunchKernelWithHostArgs of ``op``'s kernel on ``stream``; its rc."""
        data = self.packed(op)
        return self.b.launch_kernel_with_host_args(self.funcs[op.kernel], op.num_blocks, stream,
                                                   None, data, len(data))

    # -- packing ---------------------------------------------------------------------------
    def packed(self, op: Launch) -> bytes:
        """The kernel's argument struct with buffer indices replaced by device addresses."""
        return pack_launch(op, self.buf_addr.__getitem__)

    # -- capture ---------------------------------------------------------------------------
    def capture(self) -> list[Observation]:
        """Every model's CaptureBegin(origin, RELAXED) right before its first op and
        CaptureEnd right after its last (CAP-01/04/07), the ops in issue order; the capture
        observations (observe.py item 1). An EndOnSide op is observed with the capture
        statuses after it (CAP-11), a PageableCopy (MODE-14), an OutsideWait (XS-05) and a
        StrayWait (XS-14) with their rc; a failed final CaptureEnd with the model it left and
        the statuses (CAP-13)."""
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, m in enumerate(self.op_model):
            first.setdefault(m, i)
            last[m] = i
        obs: list[Observation] = []
        for m in range(self.case.models):
            if m not in first:  # an empty capture (CAP-16): begun and ended at the start
                self.begin(m)
                end = self.end(m)
                if end:
                    return obs + end
        for i, op in enumerate(self.case.ops):
            m = self.op_model[i]
            if first.get(m) == i:
                self.begin(m)
            if isinstance(op, EndOnSide):
                rc, side_model = self.b.capture_end(self.streams[op.stream])
                statuses = self.statuses()
                obs.append(Observation("capture", -1, f"ops[{i}] end on side", int(rc)))
                obs.append(Observation("capture", -1, f"ops[{i}] statuses", statuses))
                if rc == Err.SUCCESS or statuses[0] != CaptureStatus.ACTIVE:
                    # the capture ended on the wrong stream: issuing the rest would run it
                    self.capturing.discard(m)
                    if side_model:
                        self.models[m] = side_model
                    return obs
            elif isinstance(op, PageableCopy):
                rc = self.issue(op)
                self.note(rc, "aclrtMemcpyAsync (pageable)")
                obs.append(Observation("capture", -1, f"ops[{i}] rc", int(rc)))
            elif isinstance(op, Cond):
                self.add_cond(i, op)
            elif isinstance(op, GroupBegin):
                self.ok(self.b.capture_task_grp_begin(self.streams[op.stream]),
                        "aclmdlRICaptureTaskGrpBegin")
            elif isinstance(op, GroupEnd):
                rc, handle = self.b.capture_task_grp_end(self.streams[op.stream])
                self.ok(rc, "aclmdlRICaptureTaskGrpEnd")
                self.groups.append(handle)
            elif isinstance(op, (OutsideWait, StrayWait)):
                event = self.outside if isinstance(op, OutsideWait) else self.events[op.event]
                rc = self.b.stream_wait_event(self.streams[op.stream], event)
                self.note(rc, "aclrtStreamWaitEvent (event not recorded in the capture)")
                obs.append(Observation("capture", -1, f"ops[{i}] rc", int(rc)))
            else:
                self.ok(self.issue(op))
            if last.get(m) == i:
                end = self.end(m)
                if end:
                    return obs + end
        return obs + [Observation("capture", -1, "rc", 0)]

    def add_cond(self, i: int, op: Cond) -> None:
        """A conditional task (COND-01..COND-08): CondHandleCreate on the capturing model
        (default 0, flag 0), GetCondPtr, AddCondTask on the op's stream, and every
        sub-model captured on a fresh stream (CaptureToModelRIBegin RELAXED, its launches,
        CaptureEnd with a NULL model); each call must succeed."""
        s = self.streams[op.stream]
        rc, _, model = self.b.capture_get_info(s)
        self.ok(rc, "aclmdlRICaptureGetInfo")
        rc, handle = self.b.cond_handle_create(model, 0, CondHandleFlag.NONE)
        self.ok(rc, "aclmdlRICondHandleCreate")
        rc, ptr = self.b.cond_handle_get_cond_ptr(handle)
        self.ok(rc, "aclmdlRICondHandleGetCondPtr")
        self.cond_ptr[i] = int(ptr)
        ctype = CondTaskType.IF if op.type == "if" else CondTaskType.SWITCH
        size = len(op.branches)
        rc, slots = self.b.add_cond_task(CondTaskParams(handle, ctype, size, size), s, 0)
        self.ok(rc, "aclmdlRIAddCondTask")
        for sub, launches in zip(list(slots or [])[:size], op.branches):
            rc, u = self.b.create_stream()
            self.ok(rc)
            self.sub_streams.append(u)
            self.ok(self.b.capture_to_model_ri_begin(u, sub, CaptureMode.RELAXED),
                    "aclmdlRICaptureToModelRIBegin")
            for launch in launches:
                self.ok(self.launch(launch, u), "aclrtLaunchKernelWithHostArgs (sub-model)")
            rc, _ = self.b.capture_end(u, null_model=True)
            self.ok(rc, "aclmdlRICaptureEnd (sub-model)")

    def begin(self, m: int) -> None:
        """CaptureBegin of model ``m`` on its origin stream (RELAXED)."""
        self.ok(self.b.capture_begin(self.streams[self.case.origins[m]], CaptureMode.RELAXED))
        self.capturing.add(m)

    def end(self, m: int) -> list[Observation]:
        """CaptureEnd of model ``m``: [] on success (the model kept), else the failed-end
        observations (CAP-13); an unsupported or setup-like failure aborts."""
        rc, model = self.b.capture_end(self.streams[self.case.origins[m]])
        self.capturing.discard(m)
        if rc == Err.SUCCESS and model:
            self.models[m] = model
        if rc != Err.SUCCESS and rc not in NOT_SUPPORTED_CODES:
            shown = "NULL" if model is None else "unwritten" if model is UNWRITTEN else "a model"
            return [Observation("capture", -1, "rc", int(rc)),
                    Observation("capture", -1, "model", shown),
                    Observation("capture", -1, "statuses", self.statuses())]
        self.ok(rc)
        if not model:
            raise _Abort(int(Err.RT_INTERNAL_ERROR))
        return []

    def statuses(self) -> list[int | str]:
        """aclmdlRICaptureGetInfo's status of every user stream (the rc when it fails)."""
        out: list[int | str] = []
        for s in self.streams:
            rc, status, _ = self.b.capture_get_info(s)
            self.note(rc, "aclmdlRICaptureGetInfo")
            out.append(int(status) if rc == Err.SUCCESS else f"rc {rc}")
        return out

    def issue(self, op: Op) -> int:
        s = self.streams[op.stream]
        if isinstance(op, Launch):
            return self.launch(op, s)
        if isinstance(op, Record):
            return self.b.record_event(self.events[op.event], s)
        if isinstance(op, Wait):
            return self.b.stream_wait_event(s, self.events[op.event])
        if isinstance(op, ValueWrite):
            return self.b.value_write(self.word_addr[op.word], op.value, 0, s)
        if isinstance(op, ValueWait):
            return self.b.value_wait(self.word_addr[op.word], op.value, op.flag, s)
        if isinstance(op, Copy):
            return self.issue_copy(op, s)
        if isinstance(op, PageableCopy):
            n = 4 * len(self.case.buffers[op.buffer])
            host = np.zeros(len(self.case.buffers[op.buffer]), dtype=np.int32)
            self.pageable.append(host)  # ordinary numpy memory: pageable (MODE-14)
            if op.direction == "h2d":
                return self.b.memcpy_async(self.buf_addr[op.buffer], n, host, n,
                                           MemcpyKind.HOST_TO_DEVICE, s)
            return self.b.memcpy_async(host, n, self.buf_addr[op.buffer], n,
                                       MemcpyKind.DEVICE_TO_HOST, s)
        if isinstance(op, Memset):
            offset, count = op.span(4 * len(self.case.buffers[op.buffer]))
            return self.b.memset_async(self.buf_addr[op.buffer] + offset, count, op.value,
                                       count, s)
        raise TypeError(f"unknown op {op!r}")

    def issue_copy(self, op: Copy, s: Any) -> int:
        """aclrtMemcpyAsync of a whole buffer: DEVICE_TO_DEVICE, HOST_TO_DEVICE from a pinned
        host buffer or DEVICE_TO_HOST into one."""
        if op.direction == "h2d":
            n = 4 * len(self.case.hosts[op.src])
            return self.b.memcpy_async(self.buf_addr[op.dst], n, self.hosts[op.src], n,
                                       MemcpyKind.HOST_TO_DEVICE, s)
        n = 4 * len(self.case.buffers[op.src])
        if op.direction == "d2h":
            return self.b.memcpy_async(self.hosts[op.dst], n, self.buf_addr[op.src], n,
                                       MemcpyKind.DEVICE_TO_HOST, s)
        return self.b.memcpy_async(self.buf_addr[op.dst], n, self.buf_addr[op.src], n,
                                   MemcpyKind.DEVICE_TO_DEVICE, s)

    # -- the plan --------------------------------------------------------------------------
    def bounded(self, fn: Callable[[], Any], deadline_s: float) -> deadline.Outcome:
        """``fn`` under a host deadline when the case can block and the backend takes calls
        from several threads; else called directly (it cannot hang on defined work)."""
        if may_block(self.case) and Cap.THREADS in self.b.capabilities:
            if self.b in _hung:
                deadline_s += HUNG_SLACK_S - DEADLINE_SLACK_S
            out = deadline.call_within(self.b, fn, deadline_s)
            if not out.returned:
                self.stuck = True
                _hung.add(self.b)
            return out
        t0 = time.monotonic()
        value = fn()
        return deadline.Outcome(True, value, (time.monotonic() - t0) * 1000.0)

    def step(self, i: int, step: Step) -> list[Observation]:
        """Run one plan step; its observations (observe.py item 3)."""
        if isinstance(step, Execute):
            model = self.models[step.model]
            rcs = [int(self.note(self.b.execute_async(model, self.streams[0]),
                                 "aclmdlRIExecuteAsync")) for _ in range(step.times)]
            return [Observation("step", i, "rc", rcs)]
        if isinstance(step, HostFill):
            self.host_view(step.host)[:] = np.int64(step.value).astype(np.int32)
            return []
        if isinstance(step, Sync):
            return self.sync(i, step.timeout_ms)
        if isinstance(step, HostWrite):
            rc = self.note(self.store_word(self.word_addr[step.word], step.value),
                           "aclrtMemcpy H2D")
            return [Observation("step", i, "rc", rc)]
        if isinstance(step, Query):
            out = self.bounded(lambda: self.b.stream_query(self.streams[0]), DEADLINE_SLACK_S)
            if not out.returned:
                return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
            rc, status = out.value
            self.note(rc, "aclrtStreamQuery")
            return [Observation("step", i, "rc", [int(rc), int(status) if rc == Err.SUCCESS
                                                  else "unread"])]
        if isinstance(step, Destroy):
            return self.destroy(i, step)
        if isinstance(step, Update):
            return self.update(i, step.model)
        if isinstance(step, GroupUpdate):
            return self.group_update(i, step)
        if isinstance(step, SetCond):
            rc = self.note(self.store_word(self.cond_ptr[step.op], step.value),
                           "aclrtMemcpy H2D (condition value)")
            return [Observation("step", i, "rc", rc)]
        if isinstance(step, ExecuteBuilt):
            rcs = [int(self.note(self.b.execute_async(self.built[step.build], self.streams[0]),
                                 "aclmdlRIExecuteAsync (built model)"))
                   for _ in range(step.times)]
            return [Observation("step", i, "rc", rcs)]
        task = self.task_of(step.op) if hasattr(step, "op") else None
        if isinstance(step, Disable):
            rc = int(self.note(self.b.task_disable(task), "aclmdlRITaskDisable"))
            if rc == Err.SUCCESS:
                self.pending.pop(step.op, None)
                self.disabling.add(step.op)
            return [Observation("step", i, "rc", rc)]
        params, new = self.params_for(step)
        rc = int(self.note(self.b.task_set_params(task, params), "aclmdlRITaskSetParams"))
        if rc == Err.SUCCESS and new is not None:
            self.pending[step.op] = new
            self.disabling.discard(step.op)  # DIS-04: the last of SetParams/Disable wins
        return [Observation("step", i, "rc", rc)]

    def destroy(self, i: int, step: Destroy) -> list[Observation]:
        """aclmdlRIDestroy of model 0 (LIFE-01, LIFE-03). With a release store, a host thread
        of its own (device made current first) stores the value ``after_ms`` after Destroy was
        called; the observation says whether Destroy returned only after that store began, as
        it must when it waits for the execution the store releases."""
        store: dict[str, Any] = {}
        releaser = None
        if step.release_word is not None:
            device = deadline.current_device(self.b)
            addr, value = self.word_addr[step.release_word], step.release_value

            def release() -> None:
                try:
                    if device is not None:
                        self.b.set_device(device)
                    time.sleep(step.after_ms / 1000.0)
                    store["began"] = time.monotonic()
                    self.write_word(addr, value)
                except Exception:  # a failed store leaves the execution blocked: Destroy shows it
                    pass

            releaser = threading.Thread(target=release, name="mdlri-release", daemon=True)
            releaser.start()
        out = self.bounded(lambda: self.b.destroy(self.models[0]),
                           DESTROY_POLL_S + DEADLINE_SLACK_S)
        returned = time.monotonic()
        if releaser is not None:
            releaser.join(step.after_ms / 1000.0 + DEADLINE_SLACK_S)
        if not out.returned:
            return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
        rc = int(self.note(out.value, "aclmdlRIDestroy"))
        if rc == Err.SUCCESS:
            self.models[0] = None
        obs = [Observation("step", i, "rc", rc)]
        if releaser is not None:
            obs.append(Observation("step", i, "returned after the release store began",
                                   "began" in store and returned >= store["began"]))
        return obs

    def update(self, i: int, m: int) -> list[Observation]:
        """aclmdlRIUpdate of model ``m``: the rc; after a success the model's pending changes
        are committed and its listing, and with emptied streams the GetStreams order and
        those streams, observed (UPD-02, DIS-05, DIS-07, DIS-11)."""
        rc = int(self.note(self.b.update(self.models[m]), "aclmdlRIUpdate"))
        obs = [Observation("step", i, "rc", rc)]
        if rc == Err.SUCCESS:
            mine = {k for k, om in enumerate(self.op_model) if om == m}
            self.current.update({k: v for k, v in self.pending.items() if k in mine})
            for k in mine & set(self.pending):
                del self.pending[k]
            self.removed |= self.disabling & mine
            self.disabling -= mine
            obs += self.maps[m].observe(self.models[m], i, self.current)
            obs += self.maps[m].emptied(self.models[m], i, self.removed)
        return obs

    def group_update(self, i: int, step: GroupUpdate) -> list[Observation]:
        """A task-group update (TG-10): UpdateBegin(updater, handle), one launch per grouped
        task on the update stream, UpdateEnd, and a sync of the update stream (the update
        runs in its stream order); one observation, the rc list [begin, launches..., end,
        sync]. When all succeed the grouped ops are the new launches (for later listings)."""
        members = graphs.groups(self.case)[step.group]
        u = self.updater
        rcs = [int(self.note(self.b.capture_task_update_begin(u, self.groups[step.group]),
                             "aclmdlRICaptureTaskUpdateBegin"))]
        new: dict[int, Launch] = {}
        for k, kernel, args in zip(members, step.kernels, step.args):
            captured = self.case.ops[k]
            op = Launch(captured.stream, kernel, dict(args), getattr(captured, "num_blocks", 1))
            rcs.append(int(self.note(self.launch(op, u),
                                     "aclrtLaunchKernelWithHostArgs (update)")))
            new[k] = op
        rcs.append(int(self.note(self.b.capture_task_update_end(u),
                                 "aclmdlRICaptureTaskUpdateEnd")))
        rcs.append(int(self.note(self.b.synchronize_stream_with_timeout(u, CLEANUP_SYNC_MS),
                                 "aclrtSynchronizeStreamWithTimeout (update stream)")))
        if all(rc == Err.SUCCESS for rc in rcs):
            self.current.update(new)
        return [Observation("step", i, "rc", rcs)]

    def sync(self, i: int, timeout_ms: int) -> list[Observation]:
        """aclrtSynchronizeStreamWithTimeout(origin): the rc, then every buffer and word; an
        expired sync (507046) instead says whether it waited ``WAITED_SHARE`` of its
        timeout, and one that did not return says so (TMO-01, TMO-03)."""
        limit = (max(timeout_ms, 0) / 1000.0 if timeout_ms != -1 else 7.0) + DEADLINE_SLACK_S
        out = self.bounded(lambda: self.b.synchronize_stream_with_timeout(
            self.streams[0], timeout_ms), limit)
        if not out.returned:
            return [Observation("step", i, "rc", deadline.DID_NOT_RETURN)]
        rc = int(self.note(out.value, "aclrtSynchronizeStreamWithTimeout"))
        if rc == Err.RT_STREAM_SYNC_TIMEOUT:
            waited = out.elapsed_ms >= WAITED_SHARE * timeout_ms
            return [Observation("step", i, "rc", rc),
                    Observation("step", i, "waited the timeout", waited)]
        return [Observation("step", i, "rc", rc), *self.read_back(i)]

    def params_for(self, step: Step) -> tuple[TaskParams, Op | None]:
        """The aclmdlRITaskParams a SetKernel/SetValue/SetBadType step passes."""
        if isinstance(step, SetKernel):
            captured = self.case.ops[step.op]
            kernel = step.kernel or getattr(captured, "kernel", "")
            new = Launch(captured.stream, kernel, dict(step.args),
                         getattr(captured, "num_blocks", 1))
            data = self.packed(new)
            return kernel_task_params(self.funcs.get(kernel), data,
                                      num_blocks=new.num_blocks), new
        if isinstance(step, SetValue):
            captured = self.case.ops[step.op]
            word = step.word if step.word is not None else getattr(captured, "word", 0)
            new_vw = ValueWrite(captured.stream, word, step.value)
            return TaskParams(type=TaskType.VALUE_WRITE, value_write=ValueWriteTaskParams(
                dev_addr=self.word_addr[word] if word < len(self.word_addr) else None,
                value=step.value)), new_vw
        if isinstance(step, SetBadType):
            p = TaskParams(type=step.type)
            member = {TaskType.EVENT_RECORD: ("event_record", EventRecordTaskParams),
                      TaskType.EVENT_WAIT: ("event_wait", EventWaitTaskParams),
                      TaskType.EVENT_RESET: ("event_reset", EventResetTaskParams)}.get(step.type)
            if member is not None:
                setattr(p, member[0], member[1]())
            return p, None
        raise TypeError(f"unknown step {step!r}")

    def read_back(self, i: int) -> list[Observation]:
        """Every buffer (int32 list), every word (uint64), then every pinned host buffer
        (int32 list, read from host memory) after a Sync (observe.py 3)."""
        obs = []
        for b, addr in enumerate(self.buf_addr):
            out = np.zeros(len(self.case.buffers[b]), dtype=np.int32)
            rc = self.note(self.b.memcpy(out, out.nbytes, addr, out.nbytes,
                                         MemcpyKind.DEVICE_TO_HOST), "aclrtMemcpy D2H")
            obs.append(Observation("sync", i, f"buffer {b}",
                                   [int(v) for v in out] if rc == Err.SUCCESS else f"rc {rc}"))
        for w, addr in enumerate(self.word_addr):
            out64 = np.zeros(1, dtype=np.uint64)
            rc = self.note(self.b.memcpy(out64, 8, addr, 8, MemcpyKind.DEVICE_TO_HOST),
                           "aclrtMemcpy D2H")
            obs.append(Observation("sync", i, f"word {w}",
                                   int(out64[0]) if rc == Err.SUCCESS else f"rc {rc}"))
        obs += [Observation("sync", i, f"host {h}", [int(v) for v in self.host_view(h)])
                for h in range(len(self.hosts))]
        return obs

    # -- cleanup ---------------------------------------------------------------------------
    def cleanup(self) -> None:
        """End an open capture, release blocked waits (the last value the plan stores in
        each host word), drain (bounded), destroy, free; never raises."""
        b = self.b
        calls: list[Callable[[], Any]] = []
        calls += [lambda m=m: b.capture_end(self.streams[self.case.origins[m]])
                  for m in sorted(self.capturing) if self.case.origins[m] < len(self.streams)]
        release = {s.word: s.value for s in self.case.plan if isinstance(s, HostWrite)}
        release.update({s.release_word: s.release_value for s in self.case.plan
                        if isinstance(s, Destroy) and s.release_word is not None})
        calls += [lambda w=w, v=v: self.write_word(self.word_addr[w], v)
                  for w, v in release.items() if w < len(self.word_addr)]
        calls += [lambda s=s: b.synchronize_stream_with_timeout(s, CLEANUP_SYNC_MS)
                  for s in self.streams]
        if self.updater is not None:
            calls.append(lambda: b.capture_task_update_end(self.updater))
            calls.append(lambda: b.synchronize_stream_with_timeout(self.updater,
                                                                   CLEANUP_SYNC_MS))
        calls += [lambda m=m: b.destroy(m) for m in self.models if m is not None]
        calls += [lambda m=m: b.destroy(m) for m in self.built if m is not None]
        if self.binary is not None:
            calls.append(lambda: b.binary_unload(self.binary))
        calls += [lambda e=e: b.destroy_event(e) for e in self.events]
        calls += [lambda s=s: b.destroy_stream(s)
                  for s in self.streams + self.bound + self.sub_streams]
        if self.updater is not None:
            calls.append(lambda: b.destroy_stream(self.updater))
        calls += [lambda a=a: b.free(a) for a in self.buf_addr + self.word_addr]
        calls += [lambda h=h: b.free_host(h) for h in self.hosts]
        for call in calls:
            try:
                call()
            except Exception:  # cleanup of a misbehaving backend must go on
                pass


def replay(backend: Backend, case: Case) -> Replayed:
    """Replay ``case`` on ``backend``: the observations of observe.py, never raising on API
    errors, always cleaning up; where a call first answered 207000 / 207019 is kept on the
    returned :class:`Replayed`."""
    r = _Replay(backend, case)
    r.current = dict(enumerate(case.ops))
    obs = Replayed()

    def add(new: list[Observation]) -> None:
        if r.met and obs.unsupported_at is None:
            obs.unsupported_at, obs.unsupported = len(obs), r.met[0]
        obs.extend(new)

    try:
        try:
            r.setup()
            made = r.capture()
        except _Abort as exc:
            add([Observation("capture", -1, "rc", exc.rc)])
            return obs
        add(made)
        if made[-1].what != "rc" or made[-1].value != 0:
            return obs
        for m, model in enumerate(r.models):
            add(r.maps[m].observe(model, -1, r.current))
            add(r.maps[m].capture_extras(model))
        for i, step in enumerate(case.plan):
            add(r.step(i, step))
            if r.stuck:
                break
        add([])
        return obs
    finally:
        r.cleanup()


def uses_kernels(case: Case) -> bool:
    """Whether the case launches (or sets) a kernel."""
    return any(isinstance(op, Launch) for op in case.ops) or \
        any(isinstance(s, SetKernel) for s in case.plan)


def uses_waits(case: Case) -> bool:
    """Whether the case orders work through event or value waits."""
    return any(isinstance(op, (Wait, ValueWait)) for op in case.ops)


def judgeable(caps: Iterable[Cap], case: Case,
              phases: tuple[str, ...] | None = None) -> Callable[[Observation], bool]:
    """Which observations a backend with ``caps`` can be judged on: the ``phases`` (all when
    None); buffer, word and pinned host buffer contents only with data movement, only when
    the waits that order the case's work really block (``Cap.BLOCKING_WAIT``, for cases with
    waits), and buffers and host buffers of a case with kernels only with kernel execution
    too; the NOP of an emptied stream only
    with ``Cap.INTERNAL_TASKS``. Return codes, listing and seq ids always."""
    have = set(caps)
    data = Cap.DATA_MOVEMENT in have and (Cap.BLOCKING_WAIT in have or not uses_waits(case))
    kernels = Cap.KERNEL_EXEC in have or not uses_kernels(case)

    def keep(o: Observation) -> bool:
        if phases is not None and o.phase not in phases:
            return False
        if o.what.endswith(" emptied") and Cap.INTERNAL_TASKS not in have:
            return False  # the NOP of an emptied stream is an internal task (DIS-07)
        if o.phase == "sync":
            return data and (kernels or o.what.startswith("word"))
        return True
    return keep


# ---------------------------------------------------------------------------------------------
# divergence reports


@dataclass
class Divergence:
    """A case whose replay differs from the oracle.

    ``unsupported`` (non-empty) says the difference lies at or after a call that answered
    207000 / 207019: the backend cannot run the rest of the case, which is not a divergence."""

    case: Case
    backend: str
    expected: list[Observation]
    observed: list[Observation]
    difference: Difference
    path: Path | None = None
    unsupported: str = ""


def compare(case: Case, backend_name: str, expected: list[Observation],
            observed: list[Observation],
            keep: Callable[[Observation], bool] | None = None) -> Divergence | None:
    """A :class:`Divergence` when the lists differ (both restricted to ``keep``), else None."""
    cut = getattr(observed, "unsupported_at", None)
    met = getattr(observed, "unsupported", "") or "a call returned a feature-not-supported code"
    if keep is not None:
        expected = [o for o in expected if keep(o)]
        if cut is not None:
            cut = sum(1 for o in observed[:cut] if keep(o))
        observed = [o for o in observed if keep(o)]
    diff = first_difference(expected, observed)
    if diff is None:
        return None
    div = Divergence(case, backend_name, expected, observed, diff)
    if cut is not None and diff.position >= cut:
        div.unsupported = met
    return div


def save_case(case: Case, directory: Path | str | None = None) -> Path:
    """Write the case JSON under ``directory``/cases (a temp dir when None); the file name is
    a hash of the content, so the same case is written once."""
    text = case.to_json()
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    base = Path(directory) if directory else Path(tempfile.gettempdir()) / "mdlri-cases"
    out = base / "cases" if directory else base
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{case.name or 'case'}-{digest}.json"
    path.write_text(text + "\n")
    return path


def divergence_message(div: Divergence, directory: Path | str | None = None,
                       write: bool = True) -> str:
    """The failure message: first difference, expected vs observed, the case JSON, and the
    replay command (the JSON is written first so the command works as printed)."""
    if write and div.path is None:
        div.path = save_case(div.case, directory)
    d = div.difference
    where = d.expected or d.observed
    path = _case_arg(div.path)
    lines = [
        f"generated case diverges from the oracle at observation {d.position}: {d.describe()}",
        f"  expected: {_show(d.expected)}",
        f"  observed: {_show(d.observed)}",
        f"  case ({div.case.task_count()} tasks, {div.case.streams} streams): "
        f"{div.case.to_json(indent=None)}",
        f"  replay: {PROG} replay {path} --backend {div.backend}",
    ]
    if where is not None and where.phase == "listing":
        lines.insert(3, "  (listing: op indices per user stream; "
                        "see conformance/engine/observe.py)")
    return "\n".join(lines)


def _case_arg(path: Path | str | None) -> str:
    """How ``replay`` is told the case: a kept case by its shipped name (works in a checkout
    and in an installed wheel alike), any other file by its path."""
    if path is None:
        return "CASE.json"
    p = Path(path)
    shipped = Path(str(importlib.resources.files("mdlri_conformance.conformance"))) / "cases"
    return p.stem if p.parent.resolve() == shipped.resolve() else str(p)


def _show(o: Observation | None) -> str:
    return "nothing" if o is None else f"{o.phase}[{o.index}] {o.what} = {o.value!r}"
