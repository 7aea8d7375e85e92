"""Replay a task-graph case on any backend through the contract; report divergences.

:func:`replay` turns a :class:`~conformance.graphs.Case` into the observation list of
:mod:`conformance.observe`:

1. Setup: one device allocation per buffer (initial values written) and per word, one user
   stream per case stream, one ``aclrtCreateEventExWithFlag(SYNC)`` event per case event
   (XS-04), the catalog binary from ``backend.kernel_binary_path()``.
2. Capture on the origin stream in RELAXED mode (CAP-01); side streams join through the
   case's record/wait ops (XS-01, XS-02). The capture rc is the first non-zero rc of the
   setup and capture calls.
3. Listing (LIST-01, LIST-08, TYPE-02, GETP-03, GETP-05): every internal stream's
   user-visible tasks are matched to the case's per-stream op sequences by signature: the
   type (GetType), for kernels the function handle plus the argument bytes read from device
   memory at ``params.kernel.args`` compared with the packed expected arguments, for value
   tasks devAddr/value(/flag). Task handles mapped at capture are reused after Update
   (handles are stable across Update, abi.md §6.3, Q-23). Seq ids give the
   unique/increasing/stable flags (SEQ-03, SEQ-04, SEQ-05).
   The signatures get coarser when the runtime cannot show more (:data:`LEVELS`): without
   ``Cap.DATA_MOVEMENT`` no argument bytes are read from the device (kernel name only), and
   when GetParams does not answer the match uses the listing order and GetType alone.
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
import itertools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, Backend, Cap, CaptureMode, Err, EventFlag, KernelTaskParams,
    MemcpyKind, TaskParams, TaskType, ValueWriteTaskParams, EventRecordTaskParams,
    EventWaitTaskParams, EventResetTaskParams, err_name,
)
from mdlri_conformance.kernel import catalog

from .graphs import (Case, Disable, Execute, Launch, Memset, Op, Record, SetBadType, SetKernel,
                     SetValue, Step, Sync, Update, ValueWait, ValueWrite, Wait)
from .observe import Difference, Observation, first_difference

#: timed sync used by cleanup (ms): bounded, so a hanging model cannot hang the suite
CLEANUP_SYNC_MS = 2000
PROG = "mdlri-conformance"

Sig = tuple[Any, ...]

#: signature levels, finest first: full (kernel args from the device), no-args (the kernel
#: name only: data does not move), type (GetType alone: GetParams does not answer)
LEVELS = ("full", "no-args", "type")
_KIND = {TaskType.KERNEL: "kernel", TaskType.EVENT_RECORD: "record",
         TaskType.EVENT_WAIT: "wait", TaskType.VALUE_WRITE: "value_write",
         TaskType.VALUE_WAIT: "value_wait"}


def coarse(sig: Sig | None, level: str) -> Sig | None:
    """``sig`` at signature ``level`` (see :data:`LEVELS`)."""
    if sig is None or level == "full":
        return sig
    if level == "type":
        return sig[:1]
    return sig[:2] if sig[0] == "kernel" else sig


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
    # listing state
    task_op: dict[Any, int] = field(default_factory=dict)      # task handle -> op index
    op_task: dict[int, Any] = field(default_factory=dict)      # op index -> task handle
    seq0: dict[Any, int] = field(default_factory=dict)         # seq ids read after capture
    stream_user: dict[Any, int] = field(default_factory=dict)  # internal stream -> user stream
    current: dict[int, Op] = field(default_factory=dict)       # ops with committed SetParams
    pending: dict[int, Op] = field(default_factory=dict)       # SetParams awaiting Update
    level: str = "full"                                        # signature level (LEVELS)
    met: list[str] = field(default_factory=list)               # not-supported answers

    def note(self, rc: Any, call: str) -> Any:
        """Remember a 207000 / 207019 answer of ``call``; returns ``rc``."""
        if rc in NOT_SUPPORTED_CODES:
            self.met.append(f"{call} returned {err_name(rc)}")
        return rc

    def coarsen(self, level: str) -> None:
        """Use signature ``level`` from now on, if it is coarser than the current one."""
        if LEVELS.index(level) > LEVELS.index(self.level):
            self.level = level

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
        arr = np.array([int(value) & (2**64 - 1)], dtype=np.uint64)
        self.ok(self.b.memcpy(addr, 8, arr, 8, MemcpyKind.HOST_TO_DEVICE))

    # -- packing ---------------------------------------------------------------------------
    def packed(self, op: Launch) -> bytes:
        """The kernel's argument struct with buffer indices replaced by device addresses."""
        spec = catalog.get(op.kernel)
        return spec.pack(**{f.name: self.buf_addr[op.args[f.name]] if f.kind == "ptr"
                            else op.args[f.name] for f in spec.fields})

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

    # -- signatures ------------------------------------------------------------------------
    def expected_sig(self, op: Op) -> Sig | None:
        """What GetType/GetParams show for an op's task (None: DEFAULT, not mapped)."""
        if isinstance(op, Launch):
            return ("kernel", op.kernel, self.packed(op))
        if isinstance(op, Record):
            return ("record",)
        if isinstance(op, Wait):
            return ("wait",)
        if isinstance(op, ValueWrite):
            return ("value_write", self.word_addr[op.word], op.value & (2**64 - 1))
        if isinstance(op, ValueWait):
            return ("value_wait", self.word_addr[op.word], op.value & (2**64 - 1), op.flag)
        return None

    def task_type(self, task: Any) -> int | None:
        """GetType of a listed task (None when it fails)."""
        rc, ttype = self.b.task_get_type(task)
        self.note(rc, "aclmdlRITaskGetType")
        return int(ttype) if rc == Err.SUCCESS else None

    def observed_sig(self, task: Any, ttype: int | None) -> Sig | None:
        """A listed task's signature from GetType/GetParams (None for DEFAULT/internal).

        When GetParams does not answer, the signature is the type alone and the replay
        matches at the "type" level from then on (the listing order still identifies the
        tasks); without data movement kernel arguments are not read ("no-args")."""
        if ttype is None or ttype in (TaskType.DEFAULT, TaskType.EVENT_RESET):
            return None
        kind = _KIND.get(TaskType(ttype)) if ttype in _KIND else None
        if ttype in (TaskType.EVENT_RECORD, TaskType.EVENT_WAIT):
            return (kind,)
        rc, p = self.b.task_get_params(task)
        if rc != Err.SUCCESS:
            if kind is not None:
                self.coarsen("type")
                return (kind,)
            return ("unknown", int(ttype))
        if ttype == TaskType.KERNEL and p.kernel is not None:
            name = next((n for n, f in self.funcs.items() if f == p.kernel.func_handle), "?")
            return ("kernel", name, self.read_args(p.kernel))
        if ttype == TaskType.VALUE_WRITE and p.value_write is not None:
            return ("value_write", p.value_write.dev_addr, p.value_write.value & (2**64 - 1))
        if ttype == TaskType.VALUE_WAIT and p.value_wait is not None:
            w = p.value_wait
            return ("value_wait", w.dev_addr, w.value & (2**64 - 1), w.flag)
        return ("unknown", int(ttype))

    def read_args(self, k: KernelTaskParams) -> bytes | None:
        """The argument bytes of a kernel task (device copy, GETP-03; host bytes accepted);
        None when device memory does not move (the match is then by kernel name)."""
        if isinstance(k.args, (bytes, bytearray)):
            return bytes(k.args[:k.args_size])
        if Cap.DATA_MOVEMENT not in self.b.capabilities:
            self.coarsen("no-args")
            return None
        if not k.args or k.args_size <= 0:
            return b""
        out = np.zeros(k.args_size, dtype=np.uint8)
        rc = self.b.memcpy(out, k.args_size, int(k.args), k.args_size,
                           MemcpyKind.DEVICE_TO_HOST)
        return out.tobytes() if rc == Err.SUCCESS else b""

    # -- listing ---------------------------------------------------------------------------
    def list_model(self) -> list[tuple[Any, list[Any]]]:
        """(internal stream, its tasks) for every stream GetStreams returns."""
        out: list[tuple[Any, list[Any]]] = []
        rc, _, n = self.b.get_streams(self.model, None)
        if self.note(rc, "aclmdlRIGetStreams") != Err.SUCCESS or not isinstance(n, int):
            return out
        rc, slots, got = self.b.get_streams(self.model, n)
        if self.note(rc, "aclmdlRIGetStreams") != Err.SUCCESS or slots is None:
            return out
        for s in slots[:got]:
            tasks: list[Any] = []
            rc, _, m = self.b.get_tasks_by_stream(s, None)
            if self.note(rc, "aclmdlRIGetTasksByStream") == Err.SUCCESS and isinstance(m, int):
                rc, tslots, tgot = self.b.get_tasks_by_stream(s, m)
                self.note(rc, "aclmdlRIGetTasksByStream")
                if rc == Err.SUCCESS and tslots is not None:
                    tasks = list(tslots[:tgot])
            out.append((s, tasks))
        return out

    def listing(self, index: int) -> list[Observation]:
        """The listing block of observe.py item 2 (LIST-08, SEQ-03/04/05, DIS-05)."""
        listed = self.list_model()
        typed = [(s, [(t, self.task_type(t)) for t in tasks]) for s, tasks in listed]
        visible = [(s, [(t, sig) for t, sig in ((t, self.observed_sig(t, ty)) for t, ty in ts)
                        if sig is not None]) for s, ts in typed]
        visible = [(s, [(t, coarse(sig, self.level)) for t, sig in ts]) for s, ts in visible]
        first = index == -1
        if first:
            self.map_capture(visible)
            self.map_memsets(typed)
        per_user: dict[int, list[int]] = {u: [] for u in range(self.case.streams)}
        for s, ts in visible:
            u = self.stream_user.get(s)
            if u is None:
                u = self.guess_user(ts)
                self.stream_user[s] = u
            ops = [self.op_of(t, sig) for t, sig in ts]
            if u is not None:
                per_user[u].extend(ops)
        obs = [Observation("listing", index, f"stream {u} ops", ids)
               for u, ids in sorted(per_user.items())]
        obs.append(Observation("listing", index, "seq ids", self.seq_flags(listed, first)))
        return obs

    def op_of(self, task: Any, sig: Sig) -> int:
        """The op of a task: from the capture-time mapping, else by signature (-1: none)."""
        if task in self.task_op:
            return self.task_op[task]
        for i, op in sorted(self.current.items()):
            if i not in self.op_task and coarse(self.expected_sig(op), self.level) == sig:
                self.task_op[task], self.op_task[i] = i, task
                return i
        return -1

    def guess_user(self, ts: list[tuple[Any, Sig]]) -> int | None:
        """The user stream most of an unknown internal stream's known tasks belong to."""
        votes = [self.case.ops[self.task_op[t]].stream for t, _ in ts if t in self.task_op]
        return max(set(votes), key=votes.count) if votes else None

    def map_capture(self, visible: list[tuple[Any, list[tuple[Any, Sig]]]]) -> None:
        """Assign internal streams to user streams (best total alignment), then tasks to ops
        along the alignment; leftovers by signature anywhere."""
        expected = {u: [(i, coarse(self.expected_sig(op), self.level))
                        for i, op in enumerate(self.case.ops)
                        if op.stream == u and self.expected_sig(op) is not None]
                    for u in range(self.case.streams)}
        k = len(visible)
        users = list(range(self.case.streams))
        score = {(a, u): _align(visible[a][1], expected[u])[0]
                 for a in range(k) for u in users}
        best: tuple[int, ...] = ()
        best_total = -1
        # injective map internal stream -> user stream (or None when there are more streams)
        slots: list[int | None] = [*users, *([None] * max(0, k - len(users)))]
        for perm in itertools.permutations(slots, k):
            total = sum(score[(a, u)] for a, u in enumerate(perm) if u is not None)
            if total > best_total:
                best, best_total = perm, total
        for a, u in enumerate(best):
            s, ts = visible[a]
            if u is None:
                continue
            self.stream_user[s] = u
            for ti, oi in _align(ts, expected[u])[1]:
                task, op_index = ts[ti][0], expected[u][oi][0]
                self.task_op[task], self.op_task[op_index] = op_index, task

    def map_memsets(self, typed: list[tuple[Any, list[tuple[Any, int | None]]]]) -> None:
        """Memset ops (DEFAULT tasks, not identifiable by GetParams, GETP-01): the DEFAULT
        tasks of the user stream's internal stream, in order, between the tasks of the
        neighbouring mapped ops (needed to Disable them, DIS-06)."""
        for s, ts in typed:
            u = self.stream_user.get(s)
            if u is None:
                continue
            pos = {t: k for k, (t, _) in enumerate(ts)}
            used: set[int] = set()
            lo = -1
            for i, op in enumerate(self.case.ops):
                if op.stream != u:
                    continue
                t = self.op_task.get(i)
                if t is not None and t in pos:
                    lo = pos[t]
                    continue
                if not isinstance(op, Memset):
                    continue
                nxt = next((pos[self.op_task[j]] for j in range(i + 1, len(self.case.ops))
                            if self.case.ops[j].stream == u and self.op_task.get(j) in pos),
                           len(ts))
                cand = next((k for k in range(lo + 1, nxt) if k not in used
                             and ts[k][1] == TaskType.DEFAULT), None)
                if cand is not None:
                    used.add(cand)
                    lo = cand
                    self.op_task[i] = ts[cand][0]
                    self.task_op[ts[cand][0]] = i

    def seq_flags(self, listed: list[tuple[Any, list[Any]]], first: bool) -> dict[str, bool]:
        """unique within the model (SEQ-04), increasing along each list (SEQ-03), equal to
        the capture-time ids for every surviving task (SEQ-05)."""
        seen: list[int] = []
        increasing = True
        stable = True
        for _, tasks in listed:
            prev: int | None = None
            for t in tasks:
                rc, sid = self.b.task_get_seq_id(t)
                if self.note(rc, "aclmdlRITaskGetSeqId") != Err.SUCCESS or \
                        not isinstance(sid, int):
                    continue
                seen.append(sid)
                if prev is not None and sid <= prev:
                    increasing = False
                prev = sid
                if first:
                    self.seq0[t] = sid
                elif t in self.seq0 and self.seq0[t] != sid:
                    stable = False
        return {"unique": len(seen) == len(set(seen)), "increasing": increasing,
                "stable": stable}

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
                obs += self.listing(i)
            return obs
        task = self.op_task.get(step.op) if hasattr(step, "op") else None
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
            return TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
                func_handle=self.funcs.get(kernel), cfg=None, args=data, is_host_args=1,
                args_size=len(data), num_blocks=new.num_blocks)), new
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


def _align(ts: Sequence[tuple[Any, Sig]], ops: Sequence[tuple[int, Sig | None]]
           ) -> tuple[int, list[tuple[int, int]]]:
    """Longest common subsequence of task and op signatures: (length, [(task i, op j)])."""
    n, m = len(ts), len(ops)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for a in range(n - 1, -1, -1):
        for c in range(m - 1, -1, -1):
            dp[a][c] = (dp[a + 1][c + 1] + 1 if ts[a][1] == ops[c][1]
                        else max(dp[a + 1][c], dp[a][c + 1]))
    pairs: list[tuple[int, int]] = []
    a = c = 0
    while a < n and c < m:
        if ts[a][1] == ops[c][1]:
            pairs.append((a, c))
            a, c = a + 1, c + 1
        elif dp[a + 1][c] >= dp[a][c + 1]:
            a += 1
        else:
            c += 1
    return dp[0][0], pairs


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
        add(r.listing(-1))
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
        lines.insert(3, "  (listing: op indices per user stream; see conformance/observe.py)")
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
