"""A stateful machine driving the Model RI API call by call.

Groups: CAP/XS (capture with fork/join over up to 3 streams), SETP/DIS/UPD (host-side
changes deferred until Update), EXE/TMO (repeated executions, timed syncs), and in the
implementation-level machine LIST/SEQ/GETP (listing, seq ids, params), FAULT (SETP-03,
SETP-10, DIS-06, UPD-04) and invalid timeouts (TMO-02).

The machine accumulates the captured ops as a :class:`conformance.engine.graphs.Case`
(:class:`conformance.engine.machine.Capture`) and keeps the oracle's reference
:class:`~conformance.engine.oracle_program.Program` and
:class:`~conformance.engine.oracle_state.ModelState` beside the backend's model: every rc is compared
with the state model's, and every buffer and word after a successful sync with the
oracle's interpretation of the same program. Generated programs stay inside defined
behaviour: no unordered conflicting accesses, every side stream joined back before
CaptureEnd (done automatically), no value waits, no disabled events, and SetParams only
with arguments that keep the program race-free.

This module holds the rules and the invariant; what they draw from and check against (the
capture's model, the listing match by task signature, running with unsupported steps noted)
is :mod:`conformance.engine.machine`.

Two tests: :func:`test_model_ri_state_machine` uses only documented behaviour;
:func:`test_model_ri_state_machine_impl` adds the implementation-level checks (a failure
there is CHANGED, not FAIL). Each runs as :data:`BATCHES` short items with seeds of their own
(:func:`conformance.engine.machine.run`), so xdist spreads them over its workers.

What the runtime cannot show (conformance.probe) is not judged: memory after a sync needs
``Cap.DATA_MOVEMENT`` and ``Cap.BLOCKING_WAIT`` (the fork/join waits order the streams), buffers
also ``Cap.KERNEL_EXEC``; without data
movement tasks are matched by type and kernel function, not by argument bytes read from the
device. A step that meets a 207000 / 207019 (:class:`outcomes.Unsupported`) is noted, never
raised to Hypothesis (so it is never grouped with a real failure): a host-side change or query
(SetParams, Disable, Update, GetParams, the listing invariant) changed nothing and the example
goes on; any other step discards its example. A real failure is FAIL; a run that met
unsupported steps and nothing else is UNSUPPORTED with the first of them.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from hypothesis import note, reject
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, Err, EventRecordTaskParams, EventResetTaskParams, EventWaitTaskParams,
    TaskParams, TaskType, ValueWriteTaskParams,
)
from mdlri_conformance.backends.task_params import kernel_task_params
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.engine.graphs import (
    WORD_MASK, Launch, Memset, Op, Record, ValueWrite, Wait, launch_values, pack_launch,
)
from mdlri_conformance.conformance.engine.machine import (
    KERNELS, N, N_BUFFERS, N_EVENTS, N_STREAMS, N_WORDS, UNSUPPORTED, Capture, Signatures,
    StreamMatch, initial_buffer, pointer_args, run, skippable, tolerant,
)
from mdlri_conformance.conformance.engine.oracle_memory import OracleMemory
from mdlri_conformance.conformance.engine.oracle_program import Program, validate
from mdlri_conformance.conformance.engine.oracle_state import (USER_VISIBLE, ModelState, State,
                                                               task_type)
from mdlri_conformance.conformance.engine.signature import Sig
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.LISTING,
                                  Cap.TASK_TYPE, Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE,
                                  Cap.UPDATE, Cap.SYNC_TIMEOUT)

#: steps per example; the profile decides max_examples, shared between the batches
STEPS = 20
#: short test items per machine, spread over xdist workers (engine.machine.run)
BATCHES = 8
#: a model lives at least this many steps before the machine may destroy it
MIN_MODEL_STEPS = 12
#: captures issue between 1 and this many ops before CaptureEnd is allowed (plus joins)
MAX_CAPTURE_OPS = 8
BAD_TYPES = (TaskType.DEFAULT, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT, TaskType.EVENT_RESET)
#: what the work rule captures: mostly kernels
WORK_KINDS = ("kernel", "kernel", "kernel", "kernel", "memset", "value_write")
MODES = (CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED)


class Machine(RuleBasedStateMachine):
    """Documented behaviour: SETP-01, DIS-01, DIS-02, UPD-05, EXE-02, EXE-07, TMO-01."""

    backend: ClassVar[Any] = None
    IMPL: ClassVar[bool] = False
    TIMEOUTS: ClassVar[tuple[int, ...]] = (-1, 2000, 5000)

    def __init__(self) -> None:
        super().__init__()
        self.dev = Dev(self.backend)
        self.model_state = ModelState()
        self.model: Any = None
        self.cap = Capture()
        self.program: Program | None = None
        self.task_of: dict[int, Any] = {}
        self.seq_at_capture: dict[int, int] = {}
        self.seq_pool: set[int] = set()
        self.in_flight = False
        self.capture_size = 1
        self.model_steps = 0
        try:
            self._setup_resources()
        except outcomes.Unsupported as exc:
            self.dev.close()
            UNSUPPORTED.append(f"setup: {exc}")
            reject()
        except BaseException:
            self.dev.close()
            raise

    def _setup_resources(self) -> None:
        d = self.dev
        self.streams = [d.stream() for _ in range(N_STREAMS)]
        self.events = [d.event() for _ in range(N_EVENTS)]
        init = [initial_buffer(b) for b in range(N_BUFFERS)]
        self.bufs = [d.buffer(v) for v in init]
        self.word_addrs = [d.buffer64(0) for _ in range(N_WORDS)]
        self.memory = OracleMemory(init, [0] * N_WORDS)
        self.funcs = {d.func(k): k for k in KERNELS}
        self.sigs = Signatures(d, [buf.addr for buf in self.bufs], self.word_addrs, self.funcs,
                               self._moves_data())

    # -- helpers ---------------------------------------------------------------------------
    def _capturing(self) -> bool:
        return self.model_state.state is State.CAPTURE_ACTIVE

    def _moves_data(self) -> bool:
        """Device memory can be read back (words, and argument bytes of kernel tasks)."""
        return Cap.DATA_MOVEMENT in self.backend.capabilities

    def _runs_kernels(self) -> bool:
        """Buffers show kernel results (data moves and kernels execute)."""
        return self._moves_data() and Cap.KERNEL_EXEC in self.backend.capabilities

    def _judges_memory(self) -> bool:
        """Memory after a sync shows the program's order: waits block (the fork/join
        events order the streams' work) and data moves."""
        return self._moves_data() and Cap.BLOCKING_WAIT in self.backend.capabilities

    def _has_model(self) -> bool:
        return self.model_state.state in (State.READY, State.UPDATING, State.FAULT)

    def _idle_model(self) -> bool:
        """A captured model that is not running (SetParams/Disable/Update need that)."""
        return self._has_model() and not self.in_flight

    def _buffer_addr(self, b: int) -> int:
        return self.bufs[b].addr

    def _word_addr(self, w: int) -> int:
        return self.word_addrs[w]

    def _live_targets(self, kinds: tuple[type, ...]) -> list[int]:
        """Mapped ops of ``kinds`` whose task still exists (not removed by an Update)."""
        assert self.program is not None
        return sorted(i for i in self.task_of
                      if self.program.ops[i] is not None and isinstance(self.cap.ops[i], kinds))

    # -- capture ---------------------------------------------------------------------------
    @initialize(mode=st.sampled_from(MODES), size=st.integers(1, MAX_CAPTURE_OPS))
    @tolerant
    def first_capture(self, mode: int, size: int) -> None:
        """Every run starts capturing."""
        self._begin(mode, size)

    @precondition(lambda self: self.model_state.state is State.NONE)
    @rule(mode=st.sampled_from(MODES), size=st.integers(1, MAX_CAPTURE_OPS))
    @tolerant
    def begin_capture(self, mode: int, size: int) -> None:
        """CaptureBegin on the origin stream (CAP-04); ``size`` ops before End is allowed."""
        self._begin(mode, size)

    def _begin(self, mode: int, size: int) -> None:
        expect.ok(self.backend.capture_begin(self.streams[0], mode), "aclmdlRICaptureBegin")
        self.model_state.begin_capture()
        self.cap = Capture()
        self.capture_size = size

    def _issue(self, op: Op) -> None:
        """Issue one op on its (capturing) stream and record it in the case."""
        b, s = self.backend, self.streams[op.stream]
        if isinstance(op, Launch):
            rc = self.dev.launch_rc(op.kernel, s, **launch_values(op, self._buffer_addr))
        elif isinstance(op, Record):
            rc = b.record_event(self.events[op.event], s)
        elif isinstance(op, Wait):
            rc = b.stream_wait_event(s, self.events[op.event])
        elif isinstance(op, ValueWrite):
            rc = b.value_write(self.word_addrs[op.word], op.value, 0, s)
        else:
            assert isinstance(op, Memset)
            buf = self.bufs[op.buffer]
            rc = b.memset_async(buf.addr, buf.nbytes, op.value, buf.nbytes, s)
        self.cap.track(op)
        expect.ok(rc, f"{type(op).__name__} during capture (ops[{len(self.cap.ops)}])")
        self.cap.ops.append(op)

    def _scalars(self, data: st.DataObject, kernel: str) -> dict[str, int]:
        out = {}
        for f in catalog.get(kernel).fields:
            if f.name == "n":
                out["n"] = data.draw(st.integers(1, N), label="n")
            elif f.kind == "i32":
                out[f.name] = data.draw(st.integers(-5, 5), label=f.name)
        return out

    @precondition(lambda self: self._capturing())
    @rule(data=st.data(), kind=st.sampled_from(WORK_KINDS))
    @tolerant
    def work(self, data: st.DataObject, kind: str) -> None:
        """Capture a kernel launch (mostly), a memset or a value write on a capturing stream,
        touching only buffers/words that no unordered op conflicts with."""
        stream = data.draw(st.sampled_from(sorted(self.cap.joined)), label="stream")
        if kind == "memset":
            self._memset(data, stream)
        elif kind == "value_write" and Cap.VALUE_TASKS in self.backend.capabilities:
            self._value_write(data, stream)
        else:
            self._launch(data, stream)

    def _launch(self, data: st.DataObject, stream: int) -> None:
        kernel = data.draw(st.sampled_from(KERNELS), label="kernel")
        combos = self.cap.launch_candidates(stream, kernel)
        if not combos:
            return
        combo = data.draw(st.sampled_from(combos), label="buffers")
        ptrs = pointer_args(kernel)
        args = {**dict(zip(ptrs, combo)), **self._scalars(data, kernel)}
        self._issue(Launch(stream, kernel, args))

    def _memset(self, data: st.DataObject, stream: int) -> None:
        """aclrtMemsetAsync of a whole buffer (a DEFAULT task)."""
        value = data.draw(st.sampled_from((0, 1, 0x7F, 0xFF)), label="byte")
        cands = [b for b in range(N_BUFFERS) if self.cap.appendable(Memset(stream, b, value))]
        if cands:
            self._issue(Memset(stream, data.draw(st.sampled_from(cands), label="buffer"), value))

    def _value_write(self, data: st.DataObject, stream: int) -> None:
        """aclrtValueWrite of a 64-bit device word."""
        value = data.draw(st.integers(0, WORD_MASK), label="value")
        cands = [w for w in range(N_WORDS) if self.cap.appendable(ValueWrite(stream, w, value))]
        if cands:
            self._issue(ValueWrite(stream, data.draw(st.sampled_from(cands), label="word"), value))

    @precondition(lambda self: self._capturing() and len(self.cap.free_events()) > N_STREAMS - 1)
    @rule(data=st.data())
    @tolerant
    def record(self, data: st.DataObject) -> None:
        """Record a fresh event on a capturing stream (a fork point, XS-01)."""
        stream = data.draw(st.sampled_from(sorted(self.cap.joined)), label="stream")
        self._issue(Record(stream, self.cap.free_events()[0]))

    @precondition(lambda self: self._capturing() and bool(self.cap.record_stream))
    @rule(data=st.data())
    @tolerant
    def wait(self, data: st.DataObject) -> None:
        """A stream waits on a recorded event; a new stream joins the capture (XS-01)."""
        event = data.draw(st.sampled_from(sorted(self.cap.record_stream)), label="event")
        others = [s for s in range(N_STREAMS) if s != self.cap.record_stream[event]]
        self._issue(Wait(data.draw(st.sampled_from(others), label="stream"), event))

    def _join_all(self) -> None:
        """Rejoin every side stream to the origin (XS-02): record on it, origin waits."""
        for s in sorted(self.cap.joined - {0}):
            if self.cap.joined_back(s):
                continue
            event = self.cap.free_events()[0]
            self._issue(Record(s, event))
            self._issue(Wait(0, event))

    @precondition(lambda self: self._capturing() and len(self.cap.ops) >= self.capture_size)
    @rule()
    @tolerant
    def end_capture(self) -> None:
        """Join the side streams and CaptureEnd: a READY model (CAP-04, XS-02)."""
        self._join_all()
        rc, model = self.backend.capture_end(self.streams[0])
        expect.ok(rc, "aclmdlRICaptureEnd")
        expect.true(bool(model), "aclmdlRICaptureEnd model", "non-NULL", model)
        self.model = self.dev.model(model)
        self.model_steps = 0
        self.model_state.end_capture()
        validate(list(self.cap.ops), N_STREAMS)  # harness guard: the generator stays defined
        self.cap.seal()
        self.program = Program(self.cap.case(), self.memory)
        note(f"captured case: {self.cap.case().to_json(indent=None)}")
        self._map_tasks()

    # -- listing and the op <-> task mapping -------------------------------------------------
    def _match(self, user: list[list[tuple[Any, Sig | None]]]
               ) -> tuple[dict[int, Any], list[tuple[list[int], list[Any]]]]:
        """Match internal streams to user streams by their task signatures.

        Returns (op -> task for uniquely matched streams, [(op ids, tasks)] per group of
        streams whose signatures are identical). Fails when the listed user-visible tasks
        are not exactly the surviving ops of the user streams, in issue order, with the
        parameters of their latest accepted SetParams (LIST-08, DIS-05, GETP-06).
        """
        assert self.program is not None
        cur = self.program.current
        match = StreamMatch.of(list(self.program.listing().values()),
                               lambda i: self.sigs.of_op(cur(i)), user)
        if not match.agrees():
            want, got = match.summaries(self.sigs.describe)
            expect.fail("user-visible tasks per internal stream (type, kernel)", want, got,
                        clause="LIST-08")
        return match.pairs()

    def _map_tasks(self) -> None:
        """After CaptureEnd: find each op's task handle (and its seq id, SEQ-05)."""
        mapping, groups = self._match(self.sigs.user_tasks(self.sigs.listing(self.model)))
        self.task_of = mapping
        if self.IMPL:
            self.seq_at_capture = {i: self.dev.seq_of(t) for i, t in mapping.items()}
            self.seq_pool = {self.dev.seq_of(t) for _, tasks in groups for t in tasks}

    # -- host-side changes -----------------------------------------------------------------
    @precondition(lambda self: self._idle_model())
    @rule(data=st.data())
    @skippable
    def set_kernel(self, data: st.DataObject) -> None:
        """SetParams(KERNEL): other buffers/scalars/same-layout kernel; deferred (SETP-01)."""
        self.model_steps += 1
        targets = self._live_targets((Launch,))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        choices = self.cap.kernel_choices(i, self.program)
        if not choices:
            return
        kernel, combo = data.draw(st.sampled_from(choices), label="kernel, buffers")
        op = self.cap.ops[i]
        ptrs = pointer_args(kernel)
        new = Launch(op.stream, kernel, {**dict(zip(ptrs, combo)), **self._scalars(data, kernel)},
                     op.num_blocks)
        data_bytes = pack_launch(new, self._buffer_addr)
        params = kernel_task_params(self.dev.func(kernel), data_bytes,
                                    num_blocks=new.num_blocks)
        want = self.model_state.set_params(TaskType.KERNEL, TaskType.KERNEL)
        expect.rc(self.backend.task_set_params(self.task_of[i], params), want,
                  f"aclmdlRITaskSetParams(KERNEL) ops[{i}] in {self.model_state.state.name}")
        if want == Err.SUCCESS:
            self.program.set_op(i, new)

    @precondition(lambda self: self._idle_model() and Cap.VALUE_TASKS in self.backend.capabilities)
    @rule(data=st.data(), value=st.integers(0, WORD_MASK))
    @skippable
    def set_value(self, data: st.DataObject, value: int) -> None:
        """SetParams(VALUE_WRITE): same word, new value; deferred (SETP-01, UPD-05)."""
        self.model_steps += 1
        targets = self._live_targets((ValueWrite,))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        op = self.cap.ops[i]
        assert isinstance(op, ValueWrite)
        params = TaskParams(type=TaskType.VALUE_WRITE, value_write=ValueWriteTaskParams(
            dev_addr=self.word_addrs[op.word], value=value))
        want = self.model_state.set_params(TaskType.VALUE_WRITE, TaskType.VALUE_WRITE)
        expect.rc(self.backend.task_set_params(self.task_of[i], params), want,
                  f"aclmdlRITaskSetParams(VALUE_WRITE) ops[{i}]")
        if want == Err.SUCCESS:
            self.program.set_op(i, ValueWrite(op.stream, op.word, value))

    @precondition(lambda self: self._idle_model())
    @rule(data=st.data())
    @skippable
    def disable(self, data: st.DataObject) -> None:
        """TaskDisable of a kernel or value-write task: UPDATING, removed at Update (DIS-02)."""
        self.model_steps += 1
        targets = self._live_targets((Launch, ValueWrite))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        want = self.model_state.disable(is_default=False)
        expect.rc(self.backend.task_disable(self.task_of[i]), want,
                  f"aclmdlRITaskDisable ops[{i}]")
        if want == Err.SUCCESS:
            self.program.disable(i)

    @precondition(lambda self: self._idle_model() and (
        self.IMPL or self.model_state.state is State.UPDATING))
    @rule()
    @skippable
    def update(self) -> None:
        """Update: commits the pending changes (UPD-05; UPD-01/04 in the impl machine)."""
        self.model_steps += 1
        assert self.program is not None
        want = self.model_state.update()
        expect.rc(self.backend.update(self.model), want,
                  f"aclmdlRIUpdate in {self._state_before_update(want)}")
        if want == Err.SUCCESS:
            self.program.commit()
            self.task_of = {i: t for i, t in self.task_of.items()
                            if self.program.ops[i] is not None}

    def _state_before_update(self, want: int) -> str:
        return "FAULT" if want != Err.SUCCESS else "READY/UPDATING"

    def _emptiable(self) -> bool:
        """A single-stream model of kernels and value writes only, with some still live:
        disabling all of them empties its one internal stream (DIS-07)."""
        return (self.program is not None and self.model_state.state is State.READY
                and all(isinstance(op, (Launch, ValueWrite)) and op.stream == 0
                        for op in self.cap.ops)
                and bool(self._live_targets((Launch, ValueWrite))))

    @precondition(lambda self: self.IMPL and self._idle_model() and self._emptiable())
    @rule()
    @skippable
    def disable_all(self) -> None:
        """Disable every task of the model's one stream, then Update: the stream lists one
        DEFAULT task, the NOP that Update appends (DIS-07)."""
        assert self.program is not None
        for i in self._live_targets((Launch, ValueWrite)):
            want = self.model_state.disable(is_default=False)
            expect.rc(self.backend.task_disable(self.task_of[i]), want,
                      f"aclmdlRITaskDisable ops[{i}]")
            self.program.disable(i)
        self.update()
        types = [[int(ty) for _, ty in tasks] for tasks in self.sigs.listing(self.model)]
        expect.eq(types, [[int(TaskType.DEFAULT)]], "task types listed after every task of "
                  "the only stream was disabled and Update", clause="DIS-07")

    # -- implementation-level changes: faults ----------------------------------------------
    @precondition(lambda self: self.IMPL and self._idle_model()
                  and self.model_steps >= MIN_MODEL_STEPS // 2)
    @rule(data=st.data(), ttype=st.sampled_from(BAD_TYPES), on_default=st.booleans())
    @skippable
    def fault(self, data: st.DataObject, ttype: int, on_default: bool) -> None:
        """Drive the model to FAULT: TaskDisable of a DEFAULT task (DIS-06) or SetParams
        with an EVENT_* / DEFAULT type (SETP-03): 107000; in FAULT 107040 (SETP-10)."""
        self.model_steps += 1
        if on_default:
            self._disable_default(data)
        else:
            self._set_bad_type(data, ttype)

    def _disable_default(self, data: st.DataObject) -> None:
        defaults = [t for tasks in self.sigs.listing(self.model) for t, ty in tasks
                    if ty == TaskType.DEFAULT]
        if not defaults:
            return
        task = data.draw(st.sampled_from(defaults), label="DEFAULT task")
        want = self.model_state.disable(is_default=True)
        expect.rc(self.backend.task_disable(task), want, "aclmdlRITaskDisable(DEFAULT task)")

    def _set_bad_type(self, data: st.DataObject, ttype: int) -> None:
        targets = self._live_targets(USER_VISIBLE)
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        ev = self.events[0]
        params = TaskParams(type=ttype)
        if ttype == TaskType.EVENT_RECORD:
            params.event_record = EventRecordTaskParams(event=ev)
        elif ttype == TaskType.EVENT_WAIT:
            params.event_wait = EventWaitTaskParams(event=ev)
        elif ttype == TaskType.EVENT_RESET:
            params.event_reset = EventResetTaskParams(event=ev)
        want = self.model_state.set_params(ttype, task_type(self.cap.ops[i]))
        expect.rc(self.backend.task_set_params(self.task_of[i], params), want,
                  f"aclmdlRITaskSetParams(type {TaskType(ttype).name}) ops[{i}]")

    @precondition(lambda self: self.IMPL and self._has_model())
    @rule(data=st.data())
    @skippable
    def get_params(self, data: st.DataObject) -> None:
        """GetParams shows the latest accepted SetParams at once (GETP-05, GETP-06)."""
        self.model_steps += 1
        assert self.program is not None
        targets = self._live_targets((Launch, ValueWrite))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        cur = self.program.current(i)
        ttype = task_type(cur)
        rc, p = self.backend.task_get_params(self.task_of[i])
        expect.ok(rc, f"aclmdlRITaskGetParams ops[{i}]")
        expect.eq(int(p.type), int(ttype), f"GetParams type of ops[{i}]")
        if isinstance(cur, ValueWrite):
            expect.eq((p.value_write.dev_addr, p.value_write.value),
                      (self.word_addrs[cur.word], cur.value & WORD_MASK),
                      f"GetParams value write of ops[{i}]")
            return
        assert isinstance(cur, Launch)
        expect.eq(self.funcs.get(p.kernel.func_handle, repr(p.kernel.func_handle)), cur.kernel,
                  f"GetParams kernel function of ops[{i}]")
        expect.eq(p.kernel.args_size, len(pack_launch(cur, self._buffer_addr)),
                  f"GetParams argsSize of ops[{i}]")

    # -- execution -------------------------------------------------------------------------
    @precondition(lambda self: self._has_model())
    @rule(times=st.integers(1, 2))
    @tolerant
    def execute(self, times: int) -> None:
        """ExecuteAsync: 0 and one more run when READY (EXE-02), else 507011 (EXE-07)."""
        self.model_steps += 1
        assert self.program is not None
        for _ in range(times):
            state = self.model_state.state.name
            want = self.model_state.execute()
            expect.rc(self.backend.execute_async(self.model, self.streams[0]), want,
                      f"aclmdlRIExecuteAsync in {state}")
            if want == Err.SUCCESS:
                self.program.run()
                self.in_flight = True

    @precondition(lambda self: not self._capturing())
    @rule(data=st.data())
    @tolerant
    def sync(self, data: st.DataObject) -> None:
        """Timed sync of the origin stream, then every buffer and word against the oracle
        (EXE-02, SETP-01, UPD-05, DIS-01; TMO-01, TMO-02)."""
        self.model_steps += 1
        timeout = data.draw(st.sampled_from(self.TIMEOUTS), label="timeout_ms")
        want = ModelState.sync(timeout)
        expect.rc(self.backend.synchronize_stream_with_timeout(self.streams[0], timeout), want,
                  f"aclrtSynchronizeStreamWithTimeout({timeout})")
        if want != Err.SUCCESS:
            return  # the model may still be running: compare at the next valid sync
        self.in_flight = False
        if not self._judges_memory():
            return
        if self._runs_kernels():
            for b, buf in enumerate(self.bufs):
                expect.eq(self.dev.read(buf), self.memory.buffer(b), f"buffer {b} after sync")
        for w, addr in enumerate(self.word_addrs):
            expect.eq(self.dev.read64(addr), self.memory.word(w), f"word {w} after sync")

    @precondition(lambda self: self._idle_model() and (
        self.model_steps >= MIN_MODEL_STEPS or self.model_state.state is State.FAULT))
    @rule()
    @tolerant
    def destroy(self) -> None:
        """Destroy the model; a new capture may follow."""
        expect.ok(self.dev.destroy(self.model), "aclmdlRIDestroy")
        self.model_state.destroy()
        self.model, self.program, self.task_of, self.seq_at_capture = None, None, {}, {}

    def teardown(self) -> None:
        """Release everything, also after a failed step: close an open capture (joining its
        side streams), wait for the streams, destroy the model, free the resources."""
        try:
            if self._capturing():
                try:
                    self._join_all()
                except Exception:  # a failing backend: the capture is closed regardless
                    pass
                rc, m = self.backend.capture_end(self.streams[0])
                if rc == Err.SUCCESS and m:
                    self.dev.model(m)
            for s in self.streams:
                self.backend.synchronize_stream_with_timeout(s, 2000)
        finally:
            self.dev.close()

    # -- invariants (implementation level) ---------------------------------------------------
    @precondition(lambda self: self.IMPL and self._has_model())
    @invariant()
    @skippable
    def listing_matches(self) -> None:
        """Surviving user tasks per stream in issue order (LIST-08, DIS-05), kernel counts
        = launched - disabled after Update, seq ids unique (SEQ-04), increasing (SEQ-03) and
        stable since the capture (SEQ-05)."""
        assert self.program is not None
        listing = self.sigs.listing(self.model)
        kernels = sum(ty == TaskType.KERNEL for tasks in listing for _, ty in tasks)
        live = sum(isinstance(op, Launch) for op in self.program.ops if op is not None)
        expect.eq(kernels, live, "KERNEL tasks listed (launched - disabled after Update)",
                  clause="DIS-05")
        mapping, groups = self._match(self.sigs.user_tasks(listing))
        seqs = [[self.dev.seq_of(t) for t, _ in tasks] for tasks in listing]
        flat = [i for ids in seqs for i in ids]
        expect.eq(len(set(flat)), len(flat), "distinct seq ids in the model", clause="SEQ-04")
        for ids in seqs:
            expect.true(all(a < b for a, b in zip(ids, ids[1:])), "seq ids in list order",
                        "strictly increasing", ids, clause="SEQ-03")
        seq_of = {t: i for tasks, ids in zip(listing, seqs) for (t, _), i in zip(tasks, ids)}
        for i, t in sorted(mapping.items()):
            if i in self.seq_at_capture:
                expect.eq(seq_of[t], self.seq_at_capture[i], f"seq id of ops[{i}] since the "
                          "capture", clause="SEQ-05")
        for _, tasks in groups:
            for t in tasks:
                expect.true(seq_of[t] in self.seq_pool, "seq id of a user task",
                            "one of the ids read after the capture", seq_of[t], clause="SEQ-05")


class ImplMachine(Machine):
    """Adds implementation-level behaviour: FAULT, listing, seq ids, params, bad timeouts."""

    IMPL: ClassVar[bool] = True
    #: -2 is below -1 (TMO-02); 0 is not drawn: TMO-07 and TMO-08 disagree on it
    TIMEOUTS: ClassVar[tuple[int, ...]] = (-1, 2000, 5000, -2)


def _live(backend: Any) -> Any:
    counts = getattr(backend, "live_counts", None)
    return counts() if counts else None


def _run(machine: type[Machine], backend: Any, batch: int) -> None:
    """Run one batch of the machine; a run whose only trouble was unsupported steps is
    UNSUPPORTED."""
    machine.backend = backend
    run(machine, STEPS, batch, BATCHES)


@pytest.mark.clause("SETP-01", "DIS-01", "DIS-02", "UPD-05", "EXE-02", "EXE-07", "TMO-01")
@pytest.mark.parametrize("batch", range(BATCHES))
def test_model_ri_state_machine(backend: Any, batch: int) -> None:
    """SETP-01/DIS-01/DIS-02/UPD-05/EXE-02/EXE-07/TMO-01: random API call sequences give the
    oracle's return codes and memory."""
    _run(Machine, backend, batch)


@pytest.mark.clause("SETP-02", "SETP-03", "SETP-10", "DIS-05", "DIS-06", "DIS-07", "UPD-01",
                    "UPD-04", "TMO-02", "LIST-08", "SEQ-03", "SEQ-04", "SEQ-05", "GETP-05", "GETP-06",
                    "LIFE-01")
@pytest.mark.requires(Cap.SEQ_ID)
@pytest.mark.parametrize("batch", range(BATCHES))
def test_model_ri_state_machine_impl(backend: Any, batch: int) -> None:
    """SETP-02/03/10, DIS-05/06/07, UPD-01/04, TMO-02, LIST-08, SEQ-03/04/05, GETP-05/06,
    LIFE-01: the machine with faults, listings, seq ids and params checked after each step,
    and nothing left allocated afterwards."""
    before = _live(backend)
    _run(ImplMachine, backend, batch)
    after = _live(backend)
    if before is not None:
        expect.eq((after.models, after.streams, after.events, after.allocations),
                  (before.models, before.streams, before.events, before.allocations),
                  "live (models, streams, events, allocations) after the machine", clause="LIFE-01")
