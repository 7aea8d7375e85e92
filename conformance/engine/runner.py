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
207000 / 207019 (``contract.NOT_SUPPORTED_CODES``); :func:`.divergence.compare` reports a
difference at or after that point as unsupported (``Divergence.unsupported``), never as a
divergence, and judges buffer and word contents only where the backend moves data (and runs
kernels, for cases with kernels, and blocks on waits, for cases with waits):
:func:`.divergence.judgeable`.

Cleanup always runs (host stores that release blocked waits, timed sync, destroy, frees),
and nothing waits longer than a step's timeout plus its deadline. :class:`.divergence.Divergence`
and :func:`.divergence.divergence_message` format a mismatch with the case JSON and a command
that replays it without Hypothesis.

This module holds the replay's resources (setup, built models, cleanup) and :func:`replay`;
the capture calls are :mod:`conformance.engine.runner_capture`, the plan steps
:mod:`conformance.engine.runner_plan` (both mixins of the one replay state).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (NOT_SUPPORTED_CODES, Backend, Err, EventFlag,
                                                 MemcpyKind, ModelStreamFlag, StreamFlag, err_name)

from . import graphs
from .graphs import WORD_MASK, Case, Cond, Launch, Op, OutsideWait, pack_launch
from .listing import TaskMap
from .observe import Observation
from .runner_capture import Abort, CaptureCalls
from .runner_plan import CLEANUP_SYNC_MS, PlanSteps
from .steps import Destroy, GroupUpdate, HostWrite, SetKernel


class Replayed(list):  # type: ignore[type-arg]
    """The observations of a replay, plus where a call first answered 207000 / 207019:
    ``unsupported_at`` (the index of the first observation made at or after that call, or
    None) and ``unsupported`` (the call and its code)."""

    unsupported_at: int | None = None
    unsupported: str = ""


# ---------------------------------------------------------------------------------------------
# resources


@dataclass
class _Replay(CaptureCalls, PlanSteps):
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
            raise Abort(int(rc))

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

    # -- cleanup ---------------------------------------------------------------------------
    def cleanup(self) -> None:
        """End an open capture, release blocked waits (the last value the plan stores in
        each host word), drain (bounded), destroy (the models an open capture's end gives
        too: the runtime holds each one's model id until it is destroyed), free; never
        raises."""
        b = self.b
        calls: list[Callable[[], Any]] = []
        ended: list[Any] = []  # what ending an open capture returned: destroyed below

        def end(m: int) -> None:
            ended.append(b.capture_end(self.streams[self.case.origins[m]])[1])

        calls += [lambda m=m: end(m)
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
        calls.append(lambda: [b.destroy(m) for m in ended if m])
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
        except Abort as exc:
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
