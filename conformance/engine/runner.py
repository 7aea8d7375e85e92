"""Replay a task-graph case on any backend through the contract; report divergences.

:func:`replay` turns a :class:`~conformance.engine.graphs.Case` into the observation list of
:mod:`conformance.engine.observe`:

1. Setup: one device allocation per buffer (initial values written) and per word, one user
   stream per case stream, one ``aclrtCreateEventExWithFlag(SYNC)`` event per case event
   (XS-04), the catalog binary from ``backend.kernel_binary_path()``.
2. Capture on the origin stream in RELAXED mode (CAP-01); side streams join through the
   case's record/wait ops (XS-01, XS-02). The capture rc is the first non-zero rc of the
   setup and capture calls.
3. Listing after the capture and after every successful Update (LIST-01, LIST-08, SEQ-03,
   SEQ-04, SEQ-05): :class:`conformance.engine.listing.TaskMap` matches listed tasks to ops
   by their signatures (:mod:`conformance.engine.signature`).
4. The plan, step by step (SETP-01, DIS-01, UPD-05, EXE-02, TMO-01/02), every API error
   becoming an observation.

:func:`replay` returns a :class:`Replayed` list that also says where a call first answered
207000 / 207019 (``contract.NOT_SUPPORTED_CODES``); :func:`compare` reports a difference at
or after that point as unsupported (``Divergence.unsupported``), never as a divergence, and
judges buffer and word contents only where the backend moves data (and runs kernels, for
cases with kernels, and blocks on waits, for cases with waits): :func:`judgeable`.

Cleanup always runs (timed sync, destroy, frees), and nothing waits longer than a step's
timeout. :class:`Divergence` and :func:`divergence_message` format a mismatch with the case
JSON and a command that replays it without Hypothesis.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, Backend, Cap, CaptureMode, Err, EventFlag,
    MemcpyKind, TaskParams, TaskType, ValueWriteTaskParams, EventRecordTaskParams,
    EventWaitTaskParams, EventResetTaskParams, err_name,
)
from mdlri_conformance.backends.task_params import kernel_task_params

from .graphs import (Case, Disable, Execute, Launch, Memset, Op, Record, SetBadType, SetKernel,
                     SetValue, Step, Sync, Update, ValueWait, ValueWrite, Wait, WORD_MASK,
                     pack_launch)
from .listing import TaskMap
from .observe import Difference, Observation, first_difference

#: timed sync used by cleanup (ms): bounded, so a hanging model cannot hang the suite
CLEANUP_SYNC_MS = 2000
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
    funcs: dict[str, Any] = field(default_factory=dict)
    model: Any = None
    capturing: bool = False
    current: dict[int, Op] = field(default_factory=dict)       # ops with committed SetParams
    pending: dict[int, Op] = field(default_factory=dict)       # SetParams awaiting Update
    met: list[str] = field(default_factory=list)               # not-supported answers
    tasks: TaskMap = field(init=False)                         # the op <-> task mapping

    def __post_init__(self) -> None:
        # the map shares the address lists and kernel handles that setup() fills in
        self.tasks = TaskMap(self.b, self.case, self.buf_addr, self.word_addr, self.funcs,
                             self.note)

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
        for _ in range(self.case.streams):
            rc, s = self.b.create_stream()
            self.ok(rc)
            self.streams.append(s)
        for _ in range(self.case.events):
            rc, e = self.b.create_event_ex_with_flag(EventFlag.SYNC)
            self.ok(rc)
            self.events.append(e)
        kernels = {op.kernel for op in self.case.ops if isinstance(op, Launch)}
        kernels |= {s.kernel for s in self.case.plan if isinstance(s, SetKernel) and s.kernel}
        if kernels:
            rc, h = self.b.binary_load_from_file(self.b.kernel_binary_path(), None)
            self.ok(rc)
            self.binary = h
            for name in sorted(kernels):
                rc, f = self.b.binary_get_function(h, name)
                self.ok(rc)
                self.funcs[name] = f

    def write_word(self, addr: int, value: int) -> None:
        arr = np.array([int(value) & WORD_MASK], dtype=np.uint64)
        self.ok(self.b.memcpy(addr, 8, arr, 8, MemcpyKind.HOST_TO_DEVICE))

    # -- packing ---------------------------------------------------------------------------
    def packed(self, op: Launch) -> bytes:
        """The kernel's argument struct with buffer indices replaced by device addresses."""
        return pack_launch(op, self.buf_addr.__getitem__)

    # -- capture ---------------------------------------------------------------------------
    def capture(self) -> None:
        """CaptureBegin(origin, RELAXED), the ops in issue order, CaptureEnd (CAP-01/04)."""
        origin = self.streams[0]
        self.ok(self.b.capture_begin(origin, CaptureMode.RELAXED))
        self.capturing = True
        for op in self.case.ops:
            self.ok(self.issue(op))
        rc, model = self.b.capture_end(origin)
        self.capturing = False
        if rc == Err.SUCCESS and model:
            self.model = model
        self.ok(rc)
        if not model:
            raise _Abort(int(Err.RT_INTERNAL_ERROR))

    def issue(self, op: Op) -> int:
        s = self.streams[op.stream]
        if isinstance(op, Launch):
            data = self.packed(op)
            return self.b.launch_kernel_with_host_args(self.funcs[op.kernel], op.num_blocks, s,
                                                       None, data, len(data))
        if isinstance(op, Record):
            return self.b.record_event(self.events[op.event], s)
        if isinstance(op, Wait):
            return self.b.stream_wait_event(s, self.events[op.event])
        if isinstance(op, ValueWrite):
            return self.b.value_write(self.word_addr[op.word], op.value, 0, s)
        if isinstance(op, ValueWait):
            return self.b.value_wait(self.word_addr[op.word], op.value, op.flag, s)
        if isinstance(op, Memset):
            n = 4 * len(self.case.buffers[op.buffer])
            return self.b.memset_async(self.buf_addr[op.buffer], n, op.value, n, s)
        raise TypeError(f"unknown op {op!r}")

    # -- the plan --------------------------------------------------------------------------
    def step(self, i: int, step: Step) -> list[Observation]:
        """Run one plan step; its observations (observe.py item 3)."""
        if isinstance(step, Execute):
            rcs = [int(self.note(self.b.execute_async(self.model, self.streams[0]),
                                 "aclmdlRIExecuteAsync")) for _ in range(step.times)]
            return [Observation("step", i, "rc", rcs)]
        if isinstance(step, Sync):
            rc = int(self.note(self.b.synchronize_stream_with_timeout(
                self.streams[0], step.timeout_ms), "aclrtSynchronizeStreamWithTimeout"))
            return [Observation("step", i, "rc", rc), *self.read_back(i)]
        if isinstance(step, Update):
            rc = int(self.note(self.b.update(self.model), "aclmdlRIUpdate"))
            obs = [Observation("step", i, "rc", rc)]
            if rc == Err.SUCCESS:
                self.current.update(self.pending)
                self.pending.clear()
                obs += self.tasks.observe(self.model, i, self.current)
            return obs
        task = self.tasks.op_task.get(step.op) if hasattr(step, "op") else None
        if isinstance(step, Disable):
            rc = int(self.note(self.b.task_disable(task), "aclmdlRITaskDisable"))
            if rc == Err.SUCCESS:
                self.pending.pop(step.op, None)
            return [Observation("step", i, "rc", rc)]
        params, new = self.params_for(step)
        rc = int(self.note(self.b.task_set_params(task, params), "aclmdlRITaskSetParams"))
        if rc == Err.SUCCESS and new is not None:
            self.pending[step.op] = new
        return [Observation("step", i, "rc", rc)]

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
            word = getattr(captured, "word", 0)
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
        """Every buffer (int32 list) then every word (uint64) after a Sync (observe.py 3)."""
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
        return obs

    # -- cleanup ---------------------------------------------------------------------------
    def cleanup(self) -> None:
        """End an open capture, drain (bounded), destroy, free; never raises."""
        b = self.b
        calls: list[Callable[[], Any]] = []
        if self.capturing and self.streams:
            calls.append(lambda: b.capture_end(self.streams[0]))
        calls += [lambda s=s: b.synchronize_stream_with_timeout(s, CLEANUP_SYNC_MS)
                  for s in self.streams]
        if self.model is not None:
            calls.append(lambda: b.destroy(self.model))
        if self.binary is not None:
            calls.append(lambda: b.binary_unload(self.binary))
        calls += [lambda e=e: b.destroy_event(e) for e in self.events]
        calls += [lambda s=s: b.destroy_stream(s) for s in self.streams]
        calls += [lambda a=a: b.free(a) for a in self.buf_addr + self.word_addr]
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
            r.capture()
        except _Abort as exc:
            add([Observation("capture", -1, "rc", exc.rc)])
            return obs
        add([Observation("capture", -1, "rc", 0)])
        add(r.tasks.observe(r.model, -1, r.current))
        for i, step in enumerate(case.plan):
            add(r.step(i, step))
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
    None); buffer and word contents only with data movement, only when the waits that order
    the case's work really block (``Cap.BLOCKING_WAIT``, for cases with waits), and buffers
    of a case with kernels only with kernel execution too. Return codes, listing and seq ids
    always."""
    have = set(caps)
    data = Cap.DATA_MOVEMENT in have and (Cap.BLOCKING_WAIT in have or not uses_waits(case))
    kernels = Cap.KERNEL_EXEC in have or not uses_kernels(case)

    def keep(o: Observation) -> bool:
        if phases is not None and o.phase not in phases:
            return False
        if o.phase == "sync":
            return data and (kernels or not o.what.startswith("buffer"))
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
