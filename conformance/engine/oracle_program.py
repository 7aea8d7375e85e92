"""The oracle's program: a model's captured ops with its committed and pending changes, and
the interpreter that runs it once per execution (EXE-02) on an
:class:`~conformance.engine.oracle_memory.OracleMemory`.

SetParams and Disable take effect at Update (SETP-01); the last of SetParams/Disable on a task
wins (DIS-04); disabled tasks leave the listing and stop running (DIS-01, DIS-05); set tasks
run their new parameters (UPD-05). Surviving ops run in host issue order, which respects
stream order and record->wait edges, so for a case without races every schedule gives the
same memory. An execution that reaches a value wait on a host word that does not hold stays
in flight (TMO-01, TMO-03) and resumes from that wait; executions of every model queue on
one stream (EXE-01, :class:`ExecQueue`). A program that a plan made undefined (a wait whose
record was disabled, DIS-08; a race created by Disable or SetParams; a side stream no longer
joined, XS-02) raises :class:`~conformance.engine.oracle_state.UndefinedCase`. Part of the
independent oracle (:mod:`conformance.engine.oracle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from mdlri_conformance.kernel import catalog

from . import graphs
from .graphs import (Case, Cond, Copy, GraphError, Launch, Memset, Op, Record, ValueWait,
                     ValueWrite, Wait, clash, pack_launch)
from .oracle_memory import OracleMemory
from .oracle_state import USER_VISIBLE, UndefinedCase
from .ordering import happens_before_ops


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
    touching = [(i, f) for i, f in foot.items() if f[0] or f[1]]  # event tasks touch nothing
    for k, (i, fi) in enumerate(touching):
        ordered = before[i]
        for j, fj in touching[:k]:
            if j not in ordered and clash(fi, fj):
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
