"""The independent oracle: what a conforming runtime must show for a task-graph case.

From a :class:`~conformance.engine.graphs.Case` alone, :func:`expected` computes the list of
:class:`~conformance.engine.observe.Observation` that replaying the case on a conforming
backend produces, in the order of :mod:`conformance.engine.observe`. It shares no code with the
simulator (``backends/sim``) nor with the runner: it imports only the case description
(:mod:`conformance.engine.graphs`), the observation shape, the backend contract's constants
and the kernels' specification (:mod:`kernel.catalog`), which is what makes a difference from
a backend mean something.

Three parts, each usable on its own:

* :class:`ModelState`: the model state machine of the catalog (§0.3): NONE, CAPTURE_ACTIVE,
  READY, UPDATING, FAULT, with the return code of every host call (SETP-01/02/03/10/13,
  DIS-02/06/09, UPD-01..04, EXE-04/07, TMO-02, LIFE-02).
* :class:`Program`: the captured program with its committed and pending changes (SETP-01:
  SetParams and Disable take effect at Update; DIS-04: the last of SetParams/Disable on a
  task wins; DIS-01/DIS-05: disabled tasks leave the listing and stop running; UPD-05: set
  tasks run their new parameters), and an interpreter that runs it once per execution
  (EXE-02) on an :class:`OracleMemory`. An execution that reaches a value wait on a host
  word that does not hold stays *in flight* until a HostWrite satisfies it: meanwhile a
  timed sync expires with 507046 (TMO-03), StreamQuery says NOT_READY, SetParams/Disable
  answer 107040 (SETP-12, TMO-06) and Update, which has no running check, is the no-op of a
  READY model (UPD-09, UPD-01). Destroy waits for it (LIFE-03): the plan's release store,
  made from another host thread while Destroy polls, lets it finish first.
* :func:`expected`: the two above driven by a case's plan, one of each per captured model
  (``Case.origins``) over one shared memory: the models' executions queue on one stream
  in plan order (EXE-01), so what one model's execution leaves in a buffer, word or
  pinned host buffer is what the next one reads (CAP-19: host memory is read at execution).
  A task-group update replaces a group's ops at once (TG-10), a built model's launches run
  at its ExecuteBuilt (BLD-03), and a cond task runs the branch its condition value selects
  (COND-11); a task-group update and a condition write are defined only after a Sync.

Execution order: a case that passes :func:`conformance.engine.validation.check` has no two
unordered ops touching the same buffer or word with a write, so every schedule that respects
stream order and record->wait edges gives the same memory. Host issue order is such a schedule
(records come before their waits), so the interpreter runs surviving ops in issue order.
A blocked execution resumes in issue order from the blocked wait: memory is read only
after a sync that returned 0, when every schedule has given the same result. A program
that a plan made undefined (a wait whose record was disabled, a race created by Disable or
SetParams, a side stream no longer joined) raises :class:`UndefinedCase` when it would be
executed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Iterable, Union

import numpy as np

from mdlri_conformance.backends.contract import Err, StreamStatus, TaskType
from mdlri_conformance.kernel import catalog

from .graphs import (DEFAULT_OPS, WORD_MASK, Case, Cond, Copy, GraphError, Launch, Memset, Op,
                     Record, ValueWait, ValueWrite, Wait, clash, pack_launch)
from .ordering import happens_before_ops
from .steps import (Destroy, Disable, Execute, ExecuteBuilt, GroupUpdate, HostFill, HostWrite,
                    Query, SetBadType, SetCond, SetKernel, SetValue, Step, Sync, Update)
from .validation import check
from . import case_facts, graphs
from .observe import Observation
from .oracle_listing import (capture_listing_extras, capture_observations,
                             emptied_observations, listing_observations)

__all__ = [
    "UndefinedCase", "State", "ModelState", "OracleMemory", "Program", "expected",
    "sync_observations", "task_type", "validate", "footprint", "effective_ops",
    "USER_VISIBLE", "DISABLED", "ExecQueue",
]

#: op kinds whose tasks have a user-visible type (memset tasks are DEFAULT, TYPE-02)
USER_VISIBLE = (Launch, Record, Wait, ValueWrite, ValueWait)

#: the types SetParams accepts (SETP-03)
SETTABLE_TYPES = frozenset({TaskType.KERNEL, TaskType.VALUE_WRITE, TaskType.VALUE_WAIT})


class UndefinedCase(Exception):
    """The case (or what its plan made of it) leaves defined behaviour; one-line message."""


# ---------------------------------------------------------------------------------------------
# the model state machine


class State(enum.Enum):
    """Model status (semantics.md §0.3). NONE: no model (never captured, or destroyed)."""

    NONE = "NONE"
    CAPTURE_ACTIVE = "CAPTURE_ACTIVE"
    READY = "READY"
    UPDATING = "UPDATING"
    FAULT = "FAULT"


class ModelState:
    """Expected return codes and transitions of one model's host calls.

    Every method returns the rc a conforming runtime gives in the current state and moves
    to the next state. The model is assumed idle (synchronised) whenever SetParams,
    Disable or Update is called: a running model is outside this machine (SETP-12).
    """

    def __init__(self, state: State = State.NONE) -> None:
        self.state = state

    def __repr__(self) -> str:
        return f"ModelState({self.state.name})"

    # -- capture ---------------------------------------------------------------------------
    def begin_capture(self) -> int:
        """CaptureBegin on an idle stream: NONE -> CAPTURE_ACTIVE (CAP-04)."""
        if self.state is not State.NONE:
            raise UndefinedCase(f"begin_capture with a model in {self.state.name}")
        self.state = State.CAPTURE_ACTIVE
        return Err.SUCCESS

    def end_capture(self) -> int:
        """CaptureEnd of a well-joined capture: CAPTURE_ACTIVE -> READY (CAP-04, XS-02)."""
        if self.state is not State.CAPTURE_ACTIVE:
            raise UndefinedCase(f"end_capture with a model in {self.state.name}")
        self.state = State.READY
        return Err.SUCCESS

    # -- SetParams / Disable / Update ------------------------------------------------------
    def _can_change(self) -> bool:
        """The preliminary state check of SetParams/Disable (SETP-10, SETP-11, SETP-13)."""
        return self.state in (State.READY, State.UPDATING)

    def set_params(self, kind: int, target: int = TaskType.KERNEL, running: bool = False) -> int:
        """TaskSetParams with ``params->type == kind`` on a task of type ``target``.

        CAPTURE_ACTIVE or FAULT, or an execution in flight (``running``): 107040, no change
        (SETP-13, SETP-10, SETP-12). A type other than
        KERNEL/VALUE_WRITE/VALUE_WAIT, KERNEL on a non-kernel task, or a value type on a
        DEFAULT task: 107000 and FAULT (SETP-03, SETP-04, SETP-07). Otherwise 0 and
        UPDATING (SETP-01).
        """
        if running or not self._can_change():
            return Err.RT_MODEL_UPDATE_FAILED
        ok = kind in SETTABLE_TYPES and (
            target == TaskType.KERNEL if kind == TaskType.KERNEL else target != TaskType.DEFAULT)
        if not ok:
            self.state = State.FAULT
            return Err.RT_PARAM_INVALID
        self.state = State.UPDATING
        return Err.SUCCESS

    def disable(self, is_default: bool = False, running: bool = False) -> int:
        """TaskDisable: 107040 unless READY/UPDATING and idle (DIS-09, SETP-12, TMO-06); a
        DEFAULT task gives 107000 and FAULT (DIS-06); otherwise 0 and UPDATING (DIS-02)."""
        if running or not self._can_change():
            return Err.RT_MODEL_UPDATE_FAILED
        if is_default:
            self.state = State.FAULT
            return Err.RT_PARAM_INVALID
        self.state = State.UPDATING
        return Err.SUCCESS

    def update(self) -> int:
        """Update: READY no-op 0 (UPD-01, UPD-03), UPDATING -> READY 0 (UPD-02), else
        107040 (UPD-04)."""
        if self.state is State.READY:
            return Err.SUCCESS
        if self.state is State.UPDATING:
            self.state = State.READY
            return Err.SUCCESS
        return Err.RT_MODEL_UPDATE_FAILED

    # -- execution -------------------------------------------------------------------------
    def execute(self) -> int:
        """ExecuteAsync: 0 when READY (EXE-03), 507011 when UPDATING or FAULT (SETP-02,
        DIS-02, EXE-07), 107026 while capturing (EXE-04)."""
        if self.state is State.READY:
            return Err.SUCCESS
        if self.state in (State.UPDATING, State.FAULT):
            return Err.RT_MODEL_EXECUTE
        if self.state is State.CAPTURE_ACTIVE:
            return Err.RT_MODEL_CAPTURED
        raise UndefinedCase("execute without a model")

    @staticmethod
    def sync(timeout_ms: int, blocked: bool = False) -> int:
        """SynchronizeStreamWithTimeout: 107000 for a timeout below -1 (TMO-02); for work
        that completes 0 (TMO-01); for work ``blocked`` until a later host step, 507046 once
        a positive timeout expires (TMO-01, TMO-03). A timeout of 0 is not modelled: the
        documentation's immediate check (TMO-07) and the code's 107000 (TMO-08) disagree;
        -1 on blocked work never returns."""
        if timeout_ms == 0:
            raise UndefinedCase("a sync timeout of 0: TMO-07 (documented) and TMO-08 (code) "
                                "disagree")
        if timeout_ms < -1:
            if blocked:
                raise UndefinedCase("a rejected sync of blocked work: its read-back would race")
            return Err.RT_PARAM_INVALID
        if blocked:
            if timeout_ms == -1:
                raise UndefinedCase("sync(-1) of an execution that only a later step releases")
            return Err.RT_STREAM_SYNC_TIMEOUT
        return Err.SUCCESS

    def destroy(self) -> int:
        """Destroy: 107026 while capturing (LIFE-02), else 0 and NONE (LIFE-01)."""
        if self.state is State.CAPTURE_ACTIVE:
            return Err.RT_MODEL_CAPTURED
        if self.state is State.NONE:
            raise UndefinedCase("destroy without a model (use after free, LIFE-06)")
        self.state = State.NONE
        return Err.SUCCESS


def task_type(op: Op) -> TaskType:
    """The task type GetType reports for an op's task (TYPE-02)."""
    return {Launch: TaskType.KERNEL, Record: TaskType.EVENT_RECORD, Wait: TaskType.EVENT_WAIT,
            ValueWrite: TaskType.VALUE_WRITE, ValueWait: TaskType.VALUE_WAIT,
            Memset: TaskType.DEFAULT, Copy: TaskType.DEFAULT}[type(op)]


# ---------------------------------------------------------------------------------------------
# device memory


BUF_BASE = 0x1000_0000
BUF_STRIDE = 0x0010_0000
WORD_BASE = 0x7000_0000
WORD_STRIDE = 64


class OracleMemory:
    """A byte-addressed memory holding the case's buffers and words at fake addresses, and
    its pinned host buffers (reached only by copies, by index).

    Implements :class:`kernel.catalog.DeviceMemory`; an access outside a region raises
    :class:`UndefinedCase`.
    """

    def __init__(self, buffers: Iterable[Iterable[int]], words: Iterable[int],
                 hosts: Iterable[Iterable[int]] = ()) -> None:
        self._bufs = [_int32_bytes(b) for b in buffers]
        self._words = [np.array([int(w) & WORD_MASK], dtype=np.uint64).view(np.uint8).copy()
                       for w in words]
        self._hosts = [_int32_bytes(h) for h in hosts]

    @staticmethod
    def buffer_addr(b: int) -> int:
        return BUF_BASE + b * BUF_STRIDE

    @staticmethod
    def word_addr(w: int) -> int:
        return WORD_BASE + w * WORD_STRIDE

    def _region(self, addr: int, nbytes: int) -> tuple[np.ndarray, int]:
        if addr >= WORD_BASE:
            w, off = divmod(addr - WORD_BASE, WORD_STRIDE)
            regions, idx = self._words, w
        else:
            idx, off = divmod(addr - BUF_BASE, BUF_STRIDE)
            regions = self._bufs
        if addr < BUF_BASE or not 0 <= idx < len(regions) or off + nbytes > len(regions[idx]):
            raise UndefinedCase(f"access of {nbytes} bytes at {addr:#x} is outside every buffer")
        return regions[idx], off

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        region, off = self._region(addr, nbytes)
        return region[off:off + nbytes].copy()

    def write(self, addr: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        region, off = self._region(addr, len(raw))
        region[off:off + len(raw)] = raw

    # -- convenience -----------------------------------------------------------------------
    def buffer(self, b: int) -> list[int]:
        """Buffer ``b`` as int32 values."""
        return [int(v) for v in self._bufs[b].view(np.int32)]

    def word(self, w: int) -> int:
        """Word ``w`` as an unsigned 64-bit value."""
        return int(self._words[w].view(np.uint64)[0])

    def set_word(self, w: int, value: int) -> None:
        self._words[w][:] = np.array([value & WORD_MASK], dtype=np.uint64).view(np.uint8)

    def fill_bytes(self, b: int, value: int, offset: int = 0, count: int | None = None) -> None:
        """Set ``count`` bytes (default: every byte) of buffer ``b`` from byte ``offset`` to
        ``value & 0xFF``, and no other byte (aclrtMemsetAsync, RT-45)."""
        end = self._bufs[b].size if count is None else offset + count
        self._bufs[b][offset:end] = value & 0xFF

    def copy_buffer(self, src: int, dst: int) -> None:
        """Copy buffer ``src`` over buffer ``dst`` (aclrtMemcpyAsync DEVICE_TO_DEVICE)."""
        self._bufs[dst][:] = self._bufs[src]

    def copy(self, kind: str, src: int, dst: int) -> None:
        """A captured copy of ``kind`` "d2d" (buffer to buffer), "h2d" (pinned host buffer to
        buffer) or "d2h" (buffer to pinned host buffer), whole regions of one size."""
        src_pool = self._hosts if kind == "h2d" else self._bufs
        dst_pool = self._hosts if kind == "d2h" else self._bufs
        if src_pool[src].size != dst_pool[dst].size:
            raise UndefinedCase(f"a {kind} copy between regions of different sizes")
        dst_pool[dst][:] = src_pool[src]

    def host(self, h: int) -> list[int]:
        """Pinned host buffer ``h`` as int32 values."""
        return [int(v) for v in self._hosts[h].view(np.int32)]

    def fill_host(self, h: int, value: int) -> None:
        """Store ``value`` into every int32 element of pinned host buffer ``h``."""
        self._hosts[h].view(np.int32)[:] = np.int64(value).astype(np.int32)

    def buffers(self) -> list[list[int]]:
        return [self.buffer(b) for b in range(len(self._bufs))]

    def words(self) -> list[int]:
        return [self.word(w) for w in range(len(self._words))]

    def hosts(self) -> list[list[int]]:
        return [self.host(h) for h in range(len(self._hosts))]


def _int32_bytes(values: Iterable[int]) -> np.ndarray:
    """The bytes of ``values`` as int32 (wrapped), a writable uint8 array."""
    return np.asarray(list(values), dtype=np.int64).astype(np.int32).view(np.uint8).copy()


# ---------------------------------------------------------------------------------------------
# the program: committed ops, pending changes, interpreter


@dataclass(frozen=True)
class _Disabled:
    """Pending marker: the op's task is disabled at the next Update."""


DISABLED = _Disabled()
Pending = Union[Op, _Disabled]


class ExecQueue(list):  # type: ignore[type-arg]
    """The executions in flight on the execution stream, oldest first: ``[program, the op
    index it resumes at]`` entries. Every model of a case executes on one stream, so an
    execution starts only when every earlier one (of any model) has finished (EXE-01)."""

    def busy(self, program: "Program | None" = None) -> bool:
        """Whether an execution (of ``program``, or of any model) is in flight."""
        return any(p is program for p, _ in self) if program is not None else bool(self)

    def advance(self) -> None:
        """Run the executions in flight, oldest first, until one blocks or all are done."""
        while self:
            program, start = self[0]
            at = program.run_from(start)
            if at is not None:
                self[0][1] = at
                return
            self.pop(0)


class Program:
    """A captured program: the committed ops (``None`` where a task was removed, and for the
    ops of the case's other models) and the changes pending until the next Update.

    ``memory`` persists across executions (EXE-02); pass one to share it between models.
    ``model`` is the case model this program is (its ops are the ones on its streams);
    ``queue`` the execution stream it shares with the other models (a fresh one when None).
    """

    def __init__(self, case: Case, memory: OracleMemory | None = None, model: int = 0,
                 queue: ExecQueue | None = None) -> None:
        self.case = case
        self.model = model
        self.streams = case.streams
        self.origin = case.origins[model]
        self.user_streams = graphs.model_streams(case, model)
        mine = set(self.user_streams)
        self.ops: list[Op | None] = [op if op.stream in mine else None for op in case.ops]
        self.captured: list[Op] = list(case.ops)
        self.pending: dict[int, Pending] = {}
        self.host: dict[int, Op] = {}
        self.memory = memory if memory is not None else OracleMemory(case.buffers, case.words,
                                                                     case.hosts)
        self._validated = False
        self.queue = queue if queue is not None else ExecQueue()
        self.host_words = graphs.host_words(case)
        #: the condition value of every Cond op: 0 at CondHandleCreate (COND-02)
        self.cond_values: dict[int, int] = {}

    # -- host-side changes (only recorded; ModelState decides whether they are accepted) ----
    def live(self, i: int) -> Op:
        if not 0 <= i < len(self.ops):
            raise UndefinedCase(f"op {i} does not exist")
        op = self.ops[i]
        if op is None:
            raise UndefinedCase(f"op {i} was disabled and removed by an Update; its task handle "
                                "is dangling (DIS-05, LIFE-07)")
        return op

    def current(self, i: int) -> Op:
        """The parameters GetParams shows for op ``i``: those of its latest accepted
        SetParams, even before Update and even if a Disable followed (GETP-06)."""
        return self.host.get(i, self.live(i))

    def set_op(self, i: int, op: Op) -> None:
        """Pending SetParams: op ``i`` runs ``op`` after Update (SETP-01, DIS-04)."""
        self.live(i)
        self.pending[i] = op
        self.host[i] = op

    def disable(self, i: int) -> None:
        """Pending Disable of op ``i`` (DIS-02; DIS-03 twice is once; DIS-04 last wins)."""
        self.live(i)
        self.pending[i] = DISABLED

    def effective(self, override: dict[int, Pending] | None = None) -> list[Op | None]:
        """The ops the next Update would commit (pending changes, then ``override``)."""
        return effective_ops(self.ops, {**self.pending, **(override or {})})

    def invalidate(self) -> None:
        """The committed ops changed outside Update (a task-group update, TG-10): validate
        them again before the next execution."""
        self._validated = False

    def commit(self) -> None:
        """Update: apply the pending changes (UPD-02, DIS-05, UPD-05)."""
        if self.pending:
            self.ops = self.effective()
            self._validated = False
        self.pending.clear()

    # -- observations ----------------------------------------------------------------------
    def listing(self) -> dict[int, list[int]]:
        """Per user stream of this model, the indices of the surviving user-visible ops in
        issue order (LIST-08, DIS-05; memset and copy tasks are DEFAULT and unmapped)."""
        out: dict[int, list[int]] = {s: [] for s in self.user_streams}
        for i, op in enumerate(self.ops):
            if op is not None and isinstance(self.captured[i], USER_VISIBLE):
                out[self.captured[i].stream].append(i)
        return out

    # -- execution -------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        """Whether an execution of this model is in flight (blocked on a value wait, or
        queued behind one, SETP-12)."""
        return self.queue.busy(self)

    @property
    def in_flight(self) -> list[int]:
        """The op index each in-flight execution of this model resumes at, oldest first."""
        return [at for p, at in self.queue if p is self]

    def run(self) -> None:
        """One execution of the committed program (EXE-02) that must not block: surviving
        ops in issue order."""
        self.start()
        if self.busy:
            i = self.in_flight[0]
            op = self.ops[i]
            raise UndefinedCase(f"ops[{i}]: value wait for {getattr(op, 'value', '?')} on word "
                                f"{getattr(op, 'word', '?')} would block")

    def start(self) -> None:
        """ExecuteAsync: queue one execution (stream order: after those in flight, of any
        model, EXE-01) and run as far as the value waits allow."""
        if not self._validated:
            validate(self.ops, self.streams, self.origin)
            self._validated = True
        self.queue.append([self, 0])
        self.advance()

    def advance(self) -> None:
        """Run the executions in flight (of every model on the queue), oldest first, until
        one blocks or all are done."""
        self.queue.advance()

    def run_from(self, start: int) -> int | None:
        """Run the committed ops from index ``start``; the index of a value wait that blocks
        (on a host word), or None when the execution completed."""
        for i in range(start, len(self.ops)):
            op = self.ops[i]
            if op is None:
                continue
            if isinstance(op, ValueWait) and not wait_satisfied(
                    self.memory.word(op.word), op.value, op.flag):
                if op.word not in self.host_words:
                    raise UndefinedCase(
                        f"ops[{i}]: value wait for {op.value} on word {op.word} would block "
                        "and only the program writes that word")
                return i
            self._run_op(i, op)
        return None

    def _run_op(self, i: int, op: Op) -> None:
        mem = self.memory
        if isinstance(op, Launch):
            run_launch(mem, op, f"ops[{i}]")
        elif isinstance(op, ValueWrite):
            mem.set_word(op.word, op.value)
        elif isinstance(op, Memset):
            mem.fill_bytes(op.buffer, op.value, op.offset, op.count)
        elif isinstance(op, Copy):
            mem.copy(op.direction, op.src, op.dst)
        elif isinstance(op, Cond):
            for k, launch in enumerate(cond_branch(op, self.cond_values.get(i, 0))):
                run_launch(mem, launch, f"ops[{i}] branch launch {k}")


def cond_branch(op: Cond, value: int) -> list[Launch]:
    """The launches a conditional task runs for condition ``value`` (COND-11): "if" runs
    branch 0 when the value is non-zero and branch 1 (none when there is no second branch)
    when it is 0; "switch" runs branch ``value``, and none for a value at or past its
    branch count (COND-13)."""
    k = (0 if value != 0 else 1) if op.type == "if" else value
    return list(op.branches[k]) if k < len(op.branches) else []


def effective_ops(ops: list[Op | None], changes: dict[int, Pending]) -> list[Op | None]:
    """``ops`` with ``changes`` applied (DISABLED removes an op)."""
    out = list(ops)
    for i, change in changes.items():
        out[i] = None if change is DISABLED else change
    return out


def run_launch(mem: OracleMemory, op: Launch, where: str = "launch") -> None:
    """Run a catalog kernel with buffer-index pointer args mapped to ``mem`` addresses."""
    try:
        spec = catalog.get(op.kernel)
        packed = pack_launch(op, mem.buffer_addr)
    except (KeyError, ValueError, TypeError) as exc:
        raise UndefinedCase(f"{where}: bad kernel launch ({exc})") from None
    spec.run(mem, packed)


def wait_satisfied(have: int, want: int, flag: int) -> bool:
    """Whether a value wait's condition holds (:func:`graphs.wait_holds`: GEQ, EQ, AND,
    NOR on 64 bits, abi.md §3.5)."""
    try:
        return graphs.wait_holds(have, want, flag)
    except GraphError as exc:
        raise UndefinedCase(str(exc)) from None


def validate(ops: list[Op | None], streams: int, origin: int = 0) -> None:
    """Raise UndefinedCase unless the surviving ops (one model's) form a defined program:
    every wait's record survives (DIS-08), no unordered conflicting accesses, and every
    side-stream op with a side effect still happens before the last op of the ``origin``
    stream (XS-02)."""
    before = happens_before_ops(ops)
    recorded = {op.event for op in ops if isinstance(op, Record)}
    for i, op in enumerate(ops):
        if isinstance(op, Wait) and op.event not in recorded:
            raise UndefinedCase(f"ops[{i}]: waits on event {op.event} whose record was disabled "
                                "(DIS-08: the execution blocks)")
    foot = {i: footprint(op) for i, op in enumerate(ops)
            if op is not None and not isinstance(op, graphs.NO_TASK_OPS)}
    for i in foot:
        for j in foot:
            if j >= i or j in before[i]:
                continue
            if clash(foot[i], foot[j]):
                raise UndefinedCase(f"ops[{j}] and ops[{i}] race after the plan's changes")
    on_origin = [i for i in foot if ops[i].stream == origin]
    last0 = on_origin[-1] if on_origin else None
    for i, (r, w) in foot.items():
        if ops[i].stream != origin and (r or w) and (last0 is None or i not in before[last0]):
            raise UndefinedCase(f"ops[{i}]: side-stream op no longer joined to the origin stream")


def footprint(op: Op) -> tuple[set[tuple[str, int]], set[tuple[str, int]]]:
    """(reads, writes) of a surviving op (:func:`graphs.op_footprint`); an unknown kernel
    makes the case undefined."""
    try:
        return graphs.op_footprint(op)
    except KeyError as exc:
        raise UndefinedCase(str(exc.args[0])) from None



# ---------------------------------------------------------------------------------------------
# expected observations of a case


def sync_observations(index: int, memory: OracleMemory) -> list[Observation]:
    """Every buffer (int32 list), then every word (int), then every pinned host buffer
    (int32 list), after the Sync of step ``index``."""
    obs = [Observation("sync", index, f"buffer {b}", vals)
           for b, vals in enumerate(memory.buffers())]
    obs += [Observation("sync", index, f"word {w}", v) for w, v in enumerate(memory.words())]
    obs += [Observation("sync", index, f"host {h}", vals)
            for h, vals in enumerate(memory.hosts())]
    return obs


@dataclass
class _Models:
    """The state machine and program of every model of a case, over one memory and one
    execution queue."""

    states: list[ModelState]
    programs: list[Program]
    queue: ExecQueue
    op_model: list[int]
    #: an execution was queued since the last successful Sync (it may still be running)
    unsynced: bool = False

    @property
    def memory(self) -> OracleMemory:
        return self.programs[0].memory

    def of_op(self, i: int) -> tuple[ModelState, Program]:
        """The state and program of the model op ``i`` belongs to."""
        if not 0 <= i < len(self.op_model):
            raise UndefinedCase(f"op {i} does not exist")
        m = self.op_model[i]
        return self.states[m], self.programs[m]

    def host_store(self, word: int, value: int) -> None:
        """A host store into a word: the executions in flight go on as far as it lets them
        (TMO-03)."""
        self.memory.set_word(word, value)
        self.queue.advance()


def expected(case: Case) -> list[Observation]:
    """The observations a conforming runtime shows when ``case`` is replayed.

    Raises :class:`conformance.engine.graphs.GraphError` for a case outside defined behaviour at
    capture, and :class:`UndefinedCase` when its plan leads outside defined behaviour.
    """
    check(case)
    states = [ModelState() for _ in case.origins]
    for state in states:
        state.begin_capture()
    obs, made = capture_observations(case)
    if not made:
        return obs
    memory = OracleMemory(case.buffers, case.words, case.hosts)
    queue = ExecQueue()
    models = _Models(states, [Program(case, memory, m, queue) for m in range(case.models)],
                     queue, graphs.op_models(case))
    for m, state in enumerate(states):
        state.end_capture()
        obs += listing_observations(-1, models.programs[m].listing(), m)
        obs += capture_listing_extras(case, m)
    for i, step in enumerate(case.plan):
        obs += _step(i, step, models)
    return obs


def _step(i: int, step: Step, models: _Models) -> list[Observation]:
    """Apply one plan step; its observations."""
    if isinstance(step, Execute):
        model, program = models.states[step.model], models.programs[step.model]
        rcs = []
        for _ in range(step.times):
            rc = model.execute()
            if rc == Err.SUCCESS:
                program.start()
            rcs.append(int(rc))
        models.unsynced = models.unsynced or Err.SUCCESS in rcs
        return [Observation("step", i, "rc", rcs)]
    if isinstance(step, Sync):
        rc = ModelState.sync(step.timeout_ms, models.queue.busy())
        if rc == Err.SUCCESS:
            models.unsynced = False
        if rc == Err.RT_STREAM_SYNC_TIMEOUT:
            return [Observation("step", i, "rc", int(rc)),
                    Observation("step", i, "waited the timeout", True)]
        return [Observation("step", i, "rc", int(rc))] + sync_observations(i, models.memory)
    if isinstance(step, HostWrite):
        models.host_store(step.word, step.value)
        return [Observation("step", i, "rc", int(Err.SUCCESS))]
    if isinstance(step, HostFill):
        if models.queue.busy():
            raise UndefinedCase(f"plan[{i}]: a host store into host buffer {step.host} races "
                                "with an execution in flight")
        models.memory.fill_host(step.host, step.value)
        return []
    if isinstance(step, Query):
        status = StreamStatus.NOT_READY if models.queue.busy() else StreamStatus.COMPLETE
        return [Observation("step", i, "rc", [int(Err.SUCCESS), int(status)])]
    if isinstance(step, Update):
        return _update(i, step, models)
    if isinstance(step, Destroy):
        return _destroy(i, step, models)
    if isinstance(step, GroupUpdate):
        return _group_update(i, step, models)
    if isinstance(step, ExecuteBuilt):
        return _execute_built(i, step, models)
    if isinstance(step, SetCond):
        if models.unsynced or models.queue.busy():
            raise UndefinedCase(f"plan[{i}]: a condition value written while an execution may "
                                "still run")
        models.of_op(step.op)[1].cond_values[step.op] = step.value
        return [Observation("step", i, "rc", int(Err.SUCCESS))]
    model, program = models.of_op(getattr(step, "op", -1))
    rc = _change(i, step, model, program)
    return [Observation("step", i, "rc", int(rc))]


def _destroy(i: int, step: Destroy, models: _Models) -> list[Observation]:
    """Destroy of model 0 (a one-model case): with an execution in flight it waits for it
    (LIFE-03), which the release store lets finish, and returns 0 only after that store
    began; an idle model is destroyed at once (LIFE-01). A model still blocked after the
    store would make Destroy poll its 10 s and answer 107037: not drawn."""
    model, program = models.states[0], models.programs[0]
    if step.release_word is None:
        if program.busy:
            raise UndefinedCase(f"plan[{i}]: destroy of a blocked model with no release")
        return [Observation("step", i, "rc", int(model.destroy()))]
    if not program.busy:
        raise UndefinedCase(f"plan[{i}]: destroy with a release store but nothing blocked")
    models.host_store(step.release_word, step.release_value)
    if program.busy:
        raise UndefinedCase(f"plan[{i}]: the release store leaves the execution blocked, so "
                            "Destroy would poll for 10 s (107037)")
    return [Observation("step", i, "rc", int(model.destroy())),
            Observation("step", i, "returned after the release store began", True)]


def _group_update(i: int, step: GroupUpdate, models: _Models) -> list[Observation]:
    """A task-group update (TG-10): UpdateBegin, one launch per grouped task, UpdateEnd and
    the sync of the update stream all answer 0, and from then on each grouped task runs its
    replacement (another operator allowed). Defined here only for a READY model with no
    pending change, after a Sync of every execution queued before it (an update racing
    with an execution is open, Q-21). An empty group's update has no launch and also
    answers 0 throughout: 0 launches match its 0 tasks (TG-14)."""
    case = models.programs[0].case
    members = graphs.groups(case)[step.group]
    model, program = models.of_op(graphs.group_ends(case)[step.group])
    if models.unsynced:
        raise UndefinedCase(f"plan[{i}]: task-group update while an execution may still run "
                            "(no Sync since it was queued, Q-21)")
    if model.state is not State.READY or program.busy or program.pending:
        raise UndefinedCase(f"plan[{i}]: task-group update of a {model.state.name} model "
                            "(busy or with pending changes)")
    for k, kernel, args in zip(members, step.kernels, step.args):
        captured = program.live(k)
        program.ops[k] = Launch(captured.stream, kernel, dict(args),
                                getattr(captured, "num_blocks", 1))
        program.host[k] = program.ops[k]
    program.invalidate()
    return [Observation("step", i, "rc", [int(Err.SUCCESS)] * (len(members) + 3))]


def _execute_built(i: int, step: ExecuteBuilt, models: _Models) -> list[Observation]:
    """ExecuteAsync of a built model on stream 0 (BLD-03): its stored launches run, in
    order, once per execution; defined here only with no captured execution in flight
    (they would queue behind a blocked one)."""
    if models.queue.busy():
        raise UndefinedCase(f"plan[{i}]: a built model's execution queued behind a blocked one")
    launches = models.programs[0].case.builds[step.build]
    for _ in range(step.times):
        for k, op in enumerate(launches):
            run_launch(models.memory, op, f"builds[{step.build}][{k}]")
    models.unsynced = True
    return [Observation("step", i, "rc", [int(Err.SUCCESS)] * step.times)]


def _update(i: int, step: Update, models: _Models) -> list[Observation]:
    """aclmdlRIUpdate of one model: its rc, and after a success its listing and, when
    streams are emptied, the GetStreams order and the emptied streams (UPD-02, DIS-05,
    DIS-07, DIS-11). With an execution of the model in flight the
    model is READY (SetParams and Disable were refused, SETP-12) and Update, which has no
    running check, is its no-op (UPD-09, UPD-01)."""
    model, program = models.states[step.model], models.programs[step.model]
    if program.busy and model.state is not State.READY:
        raise UndefinedCase(f"plan[{i}]: Update of a {model.state.name} model while an "
                            "execution is in flight")
    rc = model.update()
    obs = [Observation("step", i, "rc", int(rc))]
    if rc == Err.SUCCESS:
        program.commit()
        obs += listing_observations(i, program.listing(), step.model)
        removed = {k for k, op in enumerate(program.ops)
                   if op is None and models.op_model[k] == step.model}
        emptied = [s for s in case_facts.emptied_streams(program.case, removed)
                   if s in program.user_streams]
        obs += emptied_observations(program.case, i, emptied, step.model)
    return obs


def _change(i: int, step: Step, model: ModelState, program: Program) -> int:
    """SetKernel / SetValue / SetBadType / Disable: the rc, recording accepted changes."""
    where = f"plan[{i}]"
    running = program.busy
    if isinstance(step, Disable):
        captured = program.captured[step.op]
        program.live(step.op)
        rc = model.disable(is_default=isinstance(captured, DEFAULT_OPS), running=running)
        if rc == Err.SUCCESS:
            program.disable(step.op)
        return rc
    if isinstance(step, SetBadType):
        if step.type in SETTABLE_TYPES:
            raise UndefinedCase(f"{where}: set_bad_type with the accepted type {step.type}")
        program.live(step.op)
        return model.set_params(step.type, task_type(program.captured[step.op]), running)
    if isinstance(step, SetKernel):
        target = program.captured[step.op]
        if not isinstance(target, Launch):
            raise UndefinedCase(f"{where}: set_kernel on a non-launch op")
        # the new kernel is step.kernel, else the captured op's kernel (as validation.check
        # reads it)
        new: Op = Launch(target.stream, step.kernel or target.kernel, dict(step.args),
                         target.num_blocks)
        kind = TaskType.KERNEL
    elif isinstance(step, SetValue):
        target = program.captured[step.op]
        if step.word is not None and isinstance(target, Launch):
            # SETP-07: the kernel task becomes a value write, same task and seq id (SEQ-05)
            new = ValueWrite(target.stream, step.word, step.value)
        elif step.word is None and isinstance(target, ValueWrite):
            new = replace(target, value=step.value)
        else:
            raise UndefinedCase(f"{where}: set_value on a {type(target).__name__} op "
                                f"with word {step.word}")
        kind = TaskType.VALUE_WRITE
    else:
        raise UndefinedCase(f"{where}: unknown step {step!r}")
    program.live(step.op)
    rc = model.set_params(kind, task_type(target), running)
    if rc == Err.SUCCESS:
        program.set_op(step.op, new)
    return rc
