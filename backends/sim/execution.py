"""A model execution on the device: the op at the head of the execution stream that runs one
op list per internal model stream (EXE-01, EXE-15), and the plan whose completion order is
worked out once per combination of its events' flags and run without queues
(:class:`TracedPlan`)."""

from __future__ import annotations

from collections import deque
from operator import attrgetter
from typing import Any, Callable, Iterable

from mdlri_conformance.backends.contract import Err

from .compiled import CompiledRun, compile_run, settle_events
from .device import DeviceFault, Engine, EventState, Op, Queue, RecordOp, ResetOp, WaitOp
from .memory import DeviceAccessError

_IS_SET = attrgetter("is_set")


class ExecuteOp(Op):
    """One model execution on a stream (EXE-01).

    When it reaches the head of its stream, ``start()`` returns one op list per internal model
    stream; each becomes a transient queue and they all run at once (cross-queue order only
    through events). The op completes when every one of those queues has drained; then
    ``on_finish(ok)`` runs (the model's running count is decremented there).
    """

    label = "execute"
    #: the model stream queues once started (None before), the indices of those that run,
    #: the plan, whether the execution failed: class defaults until set, one instance
    #: attribute fewer to store per execution where a traced plan completes at once
    queues: "list[Queue] | None" = None
    active: "set[int] | frozenset[int]" = frozenset()
    plan: Any = None
    failed = False

    def __init__(self, start: Callable[[], list[list[Op]]],
                 on_finish: Callable[[bool], None]) -> None:
        self._start = start
        self._on_finish = on_finish

    def step(self, engine: "Engine", queue: "Queue") -> bool:
        if self.queues is None:
            op_lists = self._start()
            self.plan = op_lists
            if type(op_lists) is TracedPlan and not engine.injected:
                # the plan's order for the event flags at this start, run as its compiled
                # callables (backends.sim.compiled): no queue, no engine pass per op
                flags = op_lists.flags()
                compiled = op_lists.compiled(flags, engine)
                call = None
                try:
                    for call in compiled.calls:
                        if call() is False:
                            break
                    else:
                        if compiled.complete:
                            self.queues = []
                            return True
                        call = None
                except (DeviceAccessError, DeviceFault) as exc:
                    self._leave_order(engine, queue, op_lists, flags, compiled, call, exc)
                else:
                    self._leave_order(engine, queue, op_lists, flags, compiled, call, None)
            else:
                #: a built model's plan names the streams that run from the start (HEAD);
                #: the others wait for an activation (backends.sim.switch); None = all
                heads = None if type(op_lists) is list else getattr(op_lists, "heads", None)
                self._make_queues(queue, op_lists, None, heads)
                for i in self.active:
                    if self.queues[i].ops:
                        engine.attach(self.queues[i])
        queues = self.queues
        for i in self.active:
            if queues[i].ops:
                return False
        if self.failed:
            queue.error = queue.error or int(Err.RT_MODEL_EXECUTE)
        return True

    def _make_queues(self, queue: "Queue", op_lists: list[list[Op]],
                     done: list[int] | None, heads: Any = None) -> list["Queue"]:
        """One transient queue per model stream, holding its ops from ``done[i]`` on."""
        prefix = queue.name + "/exec-q"
        self.queues = queues = [
            Queue(prefix + str(i), deque(lst if done is None else lst[done[i]:]), 0, True, self)
            for i, lst in enumerate(op_lists)]
        self.active = set(range(len(queues))) if heads is None else {
            i for i in range(len(queues)) if heads[i]}
        return queues

    def _leave_order(self, engine: "Engine", queue: "Queue", plan: "TracedPlan",
                     flags: tuple[bool, ...], compiled: CompiledRun, call: Any,
                     exc: Exception | None) -> None:
        """Hand the rest of an execution that left its compiled order at ``call`` (None: at
        the order's end, which stops at a wait nothing in the model satisfies) to the model
        stream queues, which the engine runs as it runs any execution: the op did not
        complete, is no longer :meth:`Op.stable`, or raised device error ``exc``, which
        abandons the execution (FLD-10)."""
        run = plan.run_list(flags)[0]
        k = len(run) if call is None else compiled.positions[compiled.calls.index(call)]
        settle_events(run, k)
        queues = self._make_queues(queue, plan, plan.done_counts(run, k))
        if exc is not None:
            engine._fault(queues[run[k][0]], run[k][1], exc)
            return
        for q in queues:
            if q.ops:
                engine.attach(q)

    def activate(self, engine: "Engine", index: int) -> None:
        """Start the waiting stream ``index`` of this execution (no-op once started)."""
        if self.queues is None or index in self.active:
            return
        self.active.add(index)
        if self.queues[index].ops:
            engine.attach(self.queues[index])

    def abandon(self, engine: "Engine") -> None:
        """Drop every queued op of this execution (device error or backend close)."""
        self.failed = True
        for q in self.queues or ():
            while q.ops:
                op = q.ops.popleft()
                op.finish()
                op.done = True

    def finish(self) -> None:
        cb, self._on_finish = self._on_finish, None
        if cb is not None:
            cb(not self.failed)


class TracedPlan(list):
    """An execution plan (one op list per model stream) whose ops block on nothing but the
    flags of ``states``, the model's own events, and value waits, and complete or fault in
    one step otherwise.

    With every value wait satisfied when it is reached, the order in which an execution's ops
    complete is fixed by those flags at its start; :meth:`order` works it out once per
    combination of flags, taking the streams round-robin as the engine does, each as far as it
    goes (EXE-01, EXE-15: streams are ordered only through events). A value wait that does not
    hold when the order reaches it blocks its stream there, as in the engine, which runs the
    rest of the execution (:meth:`ExecuteOp.step`, :meth:`ExecuteOp._leave_order`)."""

    __slots__ = ("states", "traces", "runs", "_compiled")
    MAX_TRACES = 32  # flag combinations kept per plan

    def __init__(self, op_lists: Iterable[list[Op]], states: Iterable[EventState]) -> None:
        super().__init__(op_lists)
        self.states = tuple(states)
        self.traces: dict[tuple[bool, ...], tuple[list[tuple[int, Op]], bool]] = {}
        self.runs: dict[tuple[bool, ...], tuple[list[tuple[Any, ...]], bool]] = {}
        self._compiled: dict[tuple[bool, ...], CompiledRun] = {}

    def compiled(self, flags: tuple[bool, ...], engine: "Engine") -> CompiledRun:
        """:meth:`run_list` as callables bound to ``engine``'s memory
        (:func:`~backends.sim.compiled.compile_run`), made again once an allocation was freed
        since they were made."""
        got = self._compiled.get(flags)
        if got is None or got.frees != engine.mem.frees:
            got = compile_run(*self.run_list(flags), engine)
            if len(self._compiled) < self.MAX_TRACES or flags in self._compiled:
                self._compiled[flags] = got
        return got

    def flags(self) -> tuple[bool, ...]:
        """The flags of its events now (the combination the next start takes)."""
        return tuple(map(_IS_SET, self.states))

    def order(self, flags: tuple[bool, ...]) -> tuple[list[tuple[int, Op]], bool]:
        """The (stream index, op) completion order from ``flags`` (one per state), and
        whether every op is in it (False: a wait that no op of the plan satisfies)."""
        got = self.traces.get(flags)
        if got is None:
            got = self._schedule(flags)
            if len(self.traces) < self.MAX_TRACES:
                self.traces[flags] = got
        return got

    def run_list(self, flags: tuple[bool, ...]) -> tuple[list[tuple[Any, ...]], bool]:
        """:meth:`order` as the runner reads it: (stream index, op, its bound ``step``,
        whether it checks :meth:`Op.stable`, whether it has a ``finish``) per op, made once
        per combination of flags (the attribute lookups of every op of every execution)."""
        got = self.runs.get(flags)
        if got is None:
            trace, complete = self.order(flags)
            got = ([(i, op, op.step, op.check_stable, op._has_finish) for i, op in trace],
                   complete)
            if len(self.runs) < self.MAX_TRACES:
                self.runs[flags] = got
        return got

    def done_counts(self, run: list[tuple[Any, ...]], k: int) -> list[int]:
        """Per stream, how many of its ops the first ``k`` entries of ``run`` completed."""
        done = [0] * len(self)
        for entry in run[:k]:
            done[entry[0]] += 1
        return done

    def _schedule(self, flags: tuple[bool, ...]) -> tuple[list[tuple[int, Op]], bool]:
        is_set = {id(s): f for s, f in zip(self.states, flags)}
        heads = [0] * len(self)
        trace: list[tuple[int, Op]] = []
        progressed = True
        while progressed:
            progressed = False
            for i, ops in enumerate(self):
                k = heads[i]
                while k < len(ops):
                    op = ops[k]
                    kind = type(op)
                    if kind is WaitOp:
                        if not is_set[id(op.state)]:
                            break
                    elif kind is RecordOp or kind is ResetOp:
                        is_set[id(op.state)] = kind is RecordOp
                    trace.append((i, op))
                    k += 1
                    progressed = True
                heads[i] = k
        return trace, all(k == len(ops) for k, ops in zip(heads, self))
