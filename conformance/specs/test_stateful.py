"""A stateful machine driving the Model RI API call by call.

Groups: CAP/XS (capture with fork/join over up to 3 streams), SETP/DIS/UPD (host-side
changes deferred until Update), EXE/TMO (repeated executions, timed syncs), and in the
implementation-level machine LIST/SEQ/GETP (listing, seq ids, params), FAULT (SETP-03,
SETP-10, DIS-06, UPD-04) and invalid timeouts (TMO-02).

The machine accumulates the captured ops as a :class:`conformance.graphs.Case` and keeps
the oracle's reference :class:`~conformance.oracle.Program` and
:class:`~conformance.oracle.ModelState` beside the backend's model: every rc is compared
with the state model's, and every buffer and word after a successful sync with the
oracle's interpretation of the same program. Generated programs stay inside defined
behaviour: no unordered conflicting accesses, every side stream joined back before
CaptureEnd (done automatically), no value waits, no disabled events, and SetParams only
with arguments that keep the program race-free.

Two tests: :func:`test_model_ri_state_machine` uses only documented behaviour;
:func:`test_model_ri_state_machine_impl` adds the implementation-level checks (a failure
there is CHANGED, not FAIL).

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

import functools
import itertools
from typing import Any, Callable, ClassVar

import pytest
from hypothesis import HealthCheck, note, reject, settings
from hypothesis.errors import FailedHealthCheck, Unsatisfiable
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test,
)

from mdlri_conformance.backends.contract import (
    Cap, CaptureMode, Err, EventRecordTaskParams, EventResetTaskParams, EventWaitTaskParams,
    KernelTaskParams, TaskParams, TaskType, ValueWriteTaskParams,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.framework import outcomes
from mdlri_conformance.conformance.graphs import Case, Launch, Memset, Op, Record, ValueWrite, Wait
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.oracle import (
    USER_VISIBLE, WORD_MASK, ModelState, OracleMemory, Program, State, footprint,
    happens_before_ops, task_type, validate,
)
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.LISTING,
                                  Cap.TASK_TYPE, Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE,
                                  Cap.UPDATE, Cap.SYNC_TIMEOUT)

N = catalog.SEED_ELEMENTS
N_BUFFERS = 5
N_WORDS = 2
N_STREAMS = 3
N_EVENTS = 10
#: steps per example; the profile decides max_examples
STEPS = 50
#: a model lives at least this many steps before the machine may destroy it
MIN_MODEL_STEPS = 12
#: captures issue between 1 and this many ops before CaptureEnd is allowed (plus joins)
MAX_CAPTURE_OPS = 8
#: the data kernels the machine draws (not the waiting / faulting special kernels)
KERNELS = tuple(k for k in catalog.KERNELS if k not in catalog.SPECIAL_KERNELS)
BAD_TYPES = (TaskType.DEFAULT, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT, TaskType.EVENT_RESET)
#: what the work rule captures: mostly kernels
WORK_KINDS = ("kernel", "kernel", "kernel", "kernel", "memset", "value_write")
MODES = (CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED)

Sig = tuple[Any, ...]


#: the unsupported steps met in the running test (reset by :func:`_run`)
_UNSUPPORTED: list[str] = []


def _tolerant(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A rule that meets a 207000 / 207019 notes it and discards the example (the call may
    have changed the backend half-way, so the machine's model of it no longer holds)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except outcomes.Unsupported as exc:
            _UNSUPPORTED.append(f"{fn.__name__}: {exc}")
            reject()
    return wrapper


def _skippable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A host-side change or query whose call answered 207000 / 207019 changed nothing:
    note it, put the expected model state back and go on with the example (so the other
    rules keep being checked in it, and a real failure among them still fails)."""

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        before = self.model_state.state
        try:
            return fn(self, *args, **kwargs)
        except outcomes.Unsupported as exc:
            _UNSUPPORTED.append(f"{fn.__name__}: {exc}")
            self.model_state.state = before
            return None
    return wrapper


def _initial_buffer(b: int) -> list[int]:
    return [(b + 1) * 10 + i for i in range(N)]


def _same_layout(kernel: str) -> list[str]:
    """Kernels SetParams may swap in for ``kernel`` (same argument struct)."""
    fields = catalog.get(kernel).fields
    return [k for k in KERNELS if catalog.get(k).fields == fields]


def _conflict(a: Op, b: Op) -> bool:
    """Whether two ops access a buffer or word and at least one of them writes it."""
    (ra, wa), (rb, wb) = footprint(a), footprint(b)
    return bool((wa & (rb | wb)) | (wb & ra))


def _race_free(new: Op, others: list[tuple[int, Op | None]], ordered: set[int]) -> bool:
    """Whether ``new`` conflicts with none of ``others`` outside the ``ordered`` indices."""
    return not any(op is not None and j not in ordered and _conflict(new, op)
                   for j, op in others)


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
        self.ops: list[Op] = []
        self.program: Program | None = None
        self.task_of: dict[int, Any] = {}
        self.seq_at_capture: dict[int, int] = {}
        self.seq_pool: set[int] = set()
        self.joined: set[int] = set()
        self.record_stream: dict[int, int] = {}
        self.order: list[set[int]] = []
        self.in_flight = False
        self.capture_size = 1
        self.model_steps = 0
        try:
            self._setup_resources()
        except outcomes.Unsupported as exc:
            self.dev.close()
            _UNSUPPORTED.append(f"setup: {exc}")
            reject()
        except BaseException:
            self.dev.close()
            raise

    def _setup_resources(self) -> None:
        d = self.dev
        self.streams = [d.stream() for _ in range(N_STREAMS)]
        self.events = [d.event() for _ in range(N_EVENTS)]
        init = [_initial_buffer(b) for b in range(N_BUFFERS)]
        self.bufs = [d.buffer(v) for v in init]
        self.word_addrs = [d.buffer64(0) for _ in range(N_WORDS)]
        self.memory = OracleMemory(init, [0] * N_WORDS)
        self.funcs = {d.func(k): k for k in KERNELS}

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

    def _values(self, op: Launch) -> dict[str, int]:
        spec = catalog.get(op.kernel)
        return {f.name: self.bufs[op.args[f.name]].addr if f.kind == "ptr" else op.args[f.name]
                for f in spec.fields}

    def _packed(self, op: Launch) -> bytes:
        return catalog.get(op.kernel).pack(**self._values(op))

    def _last_on(self, stream: int) -> int | None:
        idx = [i for i, op in enumerate(self.ops) if op.stream == stream]
        return idx[-1] if idx else None

    def _free_events(self) -> list[int]:
        return [e for e in range(N_EVENTS) if e not in self.record_stream]

    def _case(self) -> Case:
        return Case(streams=N_STREAMS, buffers=[_initial_buffer(b) for b in range(N_BUFFERS)],
                    words=[0] * N_WORDS, events=N_EVENTS, ops=list(self.ops), plan=[],
                    name="stateful")

    def _live_targets(self, kinds: tuple[type, ...]) -> list[int]:
        """Mapped ops of ``kinds`` whose task still exists (not removed by an Update)."""
        assert self.program is not None
        return sorted(i for i in self.task_of
                      if self.program.ops[i] is not None and isinstance(self.ops[i], kinds))

    # -- capture ---------------------------------------------------------------------------
    @initialize(mode=st.sampled_from(MODES), size=st.integers(1, MAX_CAPTURE_OPS))
    @_tolerant
    def first_capture(self, mode: int, size: int) -> None:
        """Every run starts capturing."""
        self._begin(mode, size)

    @precondition(lambda self: self.model_state.state is State.NONE)
    @rule(mode=st.sampled_from(MODES), size=st.integers(1, MAX_CAPTURE_OPS))
    @_tolerant
    def begin_capture(self, mode: int, size: int) -> None:
        """CaptureBegin on the origin stream (CAP-04); ``size`` ops before End is allowed."""
        self._begin(mode, size)

    def _begin(self, mode: int, size: int) -> None:
        expect.ok(self.backend.capture_begin(self.streams[0], mode), "aclmdlRICaptureBegin")
        self.model_state.begin_capture()
        self.ops, self.joined, self.record_stream = [], {0}, {}
        self.capture_size = size

    def _issue(self, op: Op) -> None:
        """Issue one op on its (capturing) stream and record it in the case."""
        b, s = self.backend, self.streams[op.stream]
        if isinstance(op, Launch):
            rc = self.dev.launch_rc(op.kernel, s, **self._values(op))
        elif isinstance(op, Record):
            rc = b.record_event(self.events[op.event], s)
            self.record_stream[op.event] = op.stream
        elif isinstance(op, Wait):
            rc = b.stream_wait_event(s, self.events[op.event])
            self.joined.add(op.stream)
        elif isinstance(op, ValueWrite):
            rc = b.value_write(self.word_addrs[op.word], op.value, 0, s)
        else:
            assert isinstance(op, Memset)
            buf = self.bufs[op.buffer]
            rc = b.memset_async(buf.addr, buf.nbytes, op.value, buf.nbytes, s)
        expect.ok(rc, f"{type(op).__name__} during capture (ops[{len(self.ops)}])")
        self.ops.append(op)

    def _ordered_before_next(self, stream: int) -> set[int]:
        """Ops that happen before the next op issued on ``stream``."""
        last = self._last_on(stream)
        return set() if last is None else happens_before_ops(list(self.ops))[last] | {last}

    def _appendable(self, new: Op) -> bool:
        """Whether issuing ``new`` keeps the capture free of unordered conflicts."""
        return _race_free(new, list(enumerate(self.ops)), self._ordered_before_next(new.stream))

    def _launch_candidates(self, stream: int, kernel: str) -> list[tuple[int, ...]]:
        fields = catalog.get(kernel).fields
        ptrs = [f.name for f in fields if f.kind == "ptr"]
        ordered = self._ordered_before_next(stream)
        others = list(enumerate(self.ops))
        out = []
        for combo in itertools.permutations(range(N_BUFFERS), len(ptrs)):
            args = {**dict(zip(ptrs, combo)), **{f.name: 1 for f in fields if f.kind == "i32"}}
            if _race_free(Launch(stream, kernel, args), others, ordered):
                out.append(combo)
        return out

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
    @_tolerant
    def work(self, data: st.DataObject, kind: str) -> None:
        """Capture a kernel launch (mostly), a memset or a value write on a capturing stream,
        touching only buffers/words that no unordered op conflicts with."""
        stream = data.draw(st.sampled_from(sorted(self.joined)), label="stream")
        if kind == "memset":
            self._memset(data, stream)
        elif kind == "value_write" and Cap.VALUE_TASKS in self.backend.capabilities:
            self._value_write(data, stream)
        else:
            self._launch(data, stream)

    def _launch(self, data: st.DataObject, stream: int) -> None:
        kernel = data.draw(st.sampled_from(KERNELS), label="kernel")
        combos = self._launch_candidates(stream, kernel)
        if not combos:
            return
        combo = data.draw(st.sampled_from(combos), label="buffers")
        ptrs = [f.name for f in catalog.get(kernel).fields if f.kind == "ptr"]
        self._issue(Launch(stream, kernel, {**dict(zip(ptrs, combo)), **self._scalars(data, kernel)}))

    def _memset(self, data: st.DataObject, stream: int) -> None:
        """aclrtMemsetAsync of a whole buffer (a DEFAULT task)."""
        value = data.draw(st.sampled_from((0, 1, 0x7F, 0xFF)), label="byte")
        cands = [b for b in range(N_BUFFERS) if self._appendable(Memset(stream, b, value))]
        if cands:
            self._issue(Memset(stream, data.draw(st.sampled_from(cands), label="buffer"), value))

    def _value_write(self, data: st.DataObject, stream: int) -> None:
        """aclrtValueWrite of a 64-bit device word."""
        value = data.draw(st.integers(0, WORD_MASK), label="value")
        cands = [w for w in range(N_WORDS) if self._appendable(ValueWrite(stream, w, value))]
        if cands:
            self._issue(ValueWrite(stream, data.draw(st.sampled_from(cands), label="word"), value))

    @precondition(lambda self: self._capturing() and len(self._free_events()) > N_STREAMS - 1)
    @rule(data=st.data())
    @_tolerant
    def record(self, data: st.DataObject) -> None:
        """Record a fresh event on a capturing stream (a fork point, XS-01)."""
        stream = data.draw(st.sampled_from(sorted(self.joined)), label="stream")
        self._issue(Record(stream, self._free_events()[0]))

    @precondition(lambda self: self._capturing() and bool(self.record_stream))
    @rule(data=st.data())
    @_tolerant
    def wait(self, data: st.DataObject) -> None:
        """A stream waits on a recorded event; a new stream joins the capture (XS-01)."""
        event = data.draw(st.sampled_from(sorted(self.record_stream)), label="event")
        others = [s for s in range(N_STREAMS) if s != self.record_stream[event]]
        self._issue(Wait(data.draw(st.sampled_from(others), label="stream"), event))

    def _join_all(self) -> None:
        """Rejoin every side stream to the origin (XS-02): record on it, origin waits."""
        for s in sorted(self.joined - {0}):
            last, last0 = self._last_on(s), self._last_on(0)
            before0 = happens_before_ops(list(self.ops))[last0] if last0 is not None else set()
            if isinstance(self.ops[last], Record) and last in before0:
                continue
            event = self._free_events()[0]
            self._issue(Record(s, event))
            self._issue(Wait(0, event))

    @precondition(lambda self: self._capturing() and len(self.ops) >= self.capture_size)
    @rule()
    @_tolerant
    def end_capture(self) -> None:
        """Join the side streams and CaptureEnd: a READY model (CAP-04, XS-02)."""
        self._join_all()
        rc, model = self.backend.capture_end(self.streams[0])
        expect.ok(rc, "aclmdlRICaptureEnd")
        expect.true(bool(model), "aclmdlRICaptureEnd model", "non-NULL", model)
        self.model = self.dev.model(model)
        self.model_steps = 0
        self.model_state.end_capture()
        validate(list(self.ops), N_STREAMS)  # harness guard: the generator stays defined
        self.order = happens_before_ops(list(self.ops))
        self.program = Program(self._case(), self.memory)
        note(f"captured case: {self._case().to_json(indent=None)}")
        self._map_tasks()

    # -- listing and the op <-> task mapping -------------------------------------------------
    def _expected_sig(self, op: Op) -> Sig:
        if isinstance(op, Launch):
            if not self._moves_data():
                return (TaskType.KERNEL, op.kernel)
            return (TaskType.KERNEL, op.kernel, self._packed(op))
        if isinstance(op, ValueWrite):
            return (TaskType.VALUE_WRITE, self.word_addrs[op.word], op.value & WORD_MASK)
        return (task_type(op),)

    def _observed_sig(self, task: Any, ttype: int) -> Sig:
        if ttype not in (TaskType.KERNEL, TaskType.VALUE_WRITE):
            return (ttype,)
        p = self.dev.params_of(task)
        if ttype == TaskType.VALUE_WRITE:
            vw = p.value_write
            return (ttype, vw.dev_addr, vw.value) if vw else (ttype, None)
        k = p.kernel
        if k is None:
            return (ttype, None)
        if not self._moves_data():  # the argument bytes cannot be read back
            return (ttype, self.funcs.get(k.func_handle, repr(k.func_handle)))
        args = k.args if isinstance(k.args, (bytes, bytearray)) else (
            self.dev.read_bytes(k.args, k.args_size) if k.args else b"")
        return (ttype, self.funcs.get(k.func_handle, repr(k.func_handle)), bytes(args))

    def _listing(self) -> list[list[tuple[Any, int]]]:
        """Per internal stream, (task, type) of every listed task."""
        return [[(t, self.dev.type_of(t)) for t in self.dev.tasks_of(s)]
                for s in self.dev.streams_of(self.model)]

    def _user_tasks(self, listing: list[list[tuple[Any, int]]]) -> list[list[tuple[Any, Sig]]]:
        visible = {TaskType.KERNEL, TaskType.EVENT_RECORD, TaskType.EVENT_WAIT,
                   TaskType.VALUE_WRITE, TaskType.VALUE_WAIT}
        return [[(t, self._observed_sig(t, ty)) for t, ty in tasks if ty in visible]
                for tasks in listing]

    def _match(self, user: list[list[tuple[Any, Sig]]]
               ) -> tuple[dict[int, Any], list[tuple[list[int], list[Any]]]]:
        """Match internal streams to user streams by their task signatures.

        Returns (op -> task for uniquely matched streams, [(op ids, tasks)] per group of
        streams whose signatures are identical). Fails when the listed user-visible tasks
        are not exactly the surviving ops of the user streams, in issue order, with the
        parameters of their latest accepted SetParams (LIST-08, DIS-05, GETP-06).
        """
        assert self.program is not None
        cur = self.program.current
        exp: dict[tuple[Sig, ...], list[list[int]]] = {}
        for ids in self.program.listing().values():
            if ids:
                exp.setdefault(tuple(self._expected_sig(cur(i)) for i in ids), []).append(ids)
        got: dict[tuple[Sig, ...], list[list[Any]]] = {}
        for tasks in user:
            if tasks:
                got.setdefault(tuple(sig for _, sig in tasks), []).append([t for t, _ in tasks])
        if {k: len(v) for k, v in exp.items()} != {k: len(v) for k, v in got.items()}:
            expect.fail("user-visible tasks per internal stream (type, kernel)",
                        sorted(self._summary(k) for k, v in exp.items() for _ in v),
                        sorted(self._summary(k) for k, v in got.items() for _ in v),
                        clause="LIST-08")
        mapping: dict[int, Any] = {}
        groups = []
        for key, id_lists in exp.items():
            if len(id_lists) == 1:
                mapping.update(zip(id_lists[0], got[key][0]))
            groups.append(([i for ids in id_lists for i in ids],
                           [t for ts in got[key] for t in ts]))
        return mapping, groups

    def _summary(self, sigs: tuple[Sig, ...]) -> list[str]:
        """Readable signatures: kernel name and decoded args, value-write word and value."""
        return [self._describe(sig) for sig in sigs]

    def _describe(self, sig: Sig) -> str:
        name = TaskType(sig[0]).name
        if sig[0] == TaskType.VALUE_WRITE and len(sig) == 3:
            word = {a: f"w{w}" for w, a in enumerate(self.word_addrs)}.get(sig[1], hex(sig[1] or 0))
            return f"{name} {word}={sig[2]}"
        if sig[0] != TaskType.KERNEL or len(sig) != 3 or sig[1] not in catalog.KERNELS:
            return name if len(sig) == 1 else f"{name} {sig[1:]!r}"
        spec = catalog.get(sig[1])
        try:
            vals = spec.unpack(sig[2])
        except Exception:  # short or malformed args: show the raw bytes
            return f"{name} {sig[1]} args={sig[2].hex()}"
        names = {buf.addr: f"b{b}" for b, buf in enumerate(self.bufs)}
        args = ",".join(f"{f.name}={names.get(vals[f.name], vals[f.name]) if f.kind == 'ptr' else vals[f.name]}"
                        for f in spec.fields)
        return f"{name} {sig[1]}({args})"

    def _map_tasks(self) -> None:
        """After CaptureEnd: find each op's task handle (and its seq id, SEQ-05)."""
        mapping, groups = self._match(self._user_tasks(self._listing()))
        self.task_of = mapping
        if self.IMPL:
            self.seq_at_capture = {i: self.dev.seq_of(t) for i, t in mapping.items()}
            self.seq_pool = {self.dev.seq_of(t) for _, tasks in groups for t in tasks}

    # -- host-side changes -----------------------------------------------------------------
    def _kernel_choices(self, i: int) -> list[tuple[str, tuple[int, ...]]]:
        """(kernel, buffers) replacements for launch op ``i`` that keep the program defined."""
        assert self.program is not None
        op = self.ops[i]
        assert isinstance(op, Launch)
        ptrs = [f.name for f in catalog.get(op.kernel).fields if f.kind == "ptr"]
        scal = {k: v for k, v in op.args.items() if k not in ptrs}
        # ordering never changes (records and waits are never disabled or set): only the
        # new accesses of op i against the ops unordered with it matter
        others = [(j, o) for j, o in enumerate(self.program.effective()) if j != i]
        ordered = self.order[i] | {j for j in range(len(self.ops)) if i in self.order[j]}
        out = []
        for kernel in _same_layout(op.kernel):
            for combo in itertools.permutations(range(N_BUFFERS), len(ptrs)):
                new = Launch(op.stream, kernel, {**dict(zip(ptrs, combo)), **scal}, op.num_blocks)
                if _race_free(new, others, ordered):
                    out.append((kernel, combo))
        return out

    @precondition(lambda self: self._idle_model())
    @rule(data=st.data())
    @_skippable
    def set_kernel(self, data: st.DataObject) -> None:
        """SetParams(KERNEL): other buffers/scalars/same-layout kernel; deferred (SETP-01)."""
        self.model_steps += 1
        targets = self._live_targets((Launch,))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        choices = self._kernel_choices(i)
        if not choices:
            return
        kernel, combo = data.draw(st.sampled_from(choices), label="kernel, buffers")
        op = self.ops[i]
        ptrs = [f.name for f in catalog.get(kernel).fields if f.kind == "ptr"]
        new = Launch(op.stream, kernel, {**dict(zip(ptrs, combo)), **self._scalars(data, kernel)},
                     op.num_blocks)
        data_bytes = self._packed(new)
        params = TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
            func_handle=self.dev.func(kernel), cfg=None, args=data_bytes, is_host_args=1,
            args_size=len(data_bytes), num_blocks=new.num_blocks))
        want = self.model_state.set_params(TaskType.KERNEL, TaskType.KERNEL)
        expect.rc(self.backend.task_set_params(self.task_of[i], params), want,
                  f"aclmdlRITaskSetParams(KERNEL) ops[{i}] in {self.model_state.state.name}")
        if want == Err.SUCCESS:
            self.program.set_op(i, new)

    @precondition(lambda self: self._idle_model() and Cap.VALUE_TASKS in self.backend.capabilities)
    @rule(data=st.data(), value=st.integers(0, WORD_MASK))
    @_skippable
    def set_value(self, data: st.DataObject, value: int) -> None:
        """SetParams(VALUE_WRITE): same word, new value; deferred (SETP-01, UPD-05)."""
        self.model_steps += 1
        targets = self._live_targets((ValueWrite,))
        if not targets:
            return
        i = data.draw(st.sampled_from(targets), label="op")
        op = self.ops[i]
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
    @_skippable
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
    @_skippable
    def update(self) -> None:
        """Update: commits the pending changes (UPD-05; UPD-01/04 in the impl machine)."""
        self.model_steps += 1
        assert self.program is not None
        want = self.model_state.update()
        expect.rc(self.backend.update(self.model), want,
                  f"aclmdlRIUpdate in {self._state_before_update(want)}")
        if want == Err.SUCCESS:
            self.program.commit()
            self.task_of = {i: t for i, t in self.task_of.items() if self.program.ops[i] is not None}

    def _state_before_update(self, want: int) -> str:
        return "FAULT" if want != Err.SUCCESS else "READY/UPDATING"

    # -- implementation-level changes: faults ----------------------------------------------
    @precondition(lambda self: self.IMPL and self._idle_model()
                  and self.model_steps >= MIN_MODEL_STEPS // 2)
    @rule(data=st.data(), ttype=st.sampled_from(BAD_TYPES), on_default=st.booleans())
    @_skippable
    def fault(self, data: st.DataObject, ttype: int, on_default: bool) -> None:
        """Drive the model to FAULT: TaskDisable of a DEFAULT task (DIS-06) or SetParams
        with an EVENT_* / DEFAULT type (SETP-03): 107000; in FAULT 107040 (SETP-10)."""
        self.model_steps += 1
        if on_default:
            self._disable_default(data)
        else:
            self._set_bad_type(data, ttype)

    def _disable_default(self, data: st.DataObject) -> None:
        defaults = [t for tasks in self._listing() for t, ty in tasks if ty == TaskType.DEFAULT]
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
        want = self.model_state.set_params(ttype, task_type(self.ops[i]))
        expect.rc(self.backend.task_set_params(self.task_of[i], params), want,
                  f"aclmdlRITaskSetParams(type {TaskType(ttype).name}) ops[{i}]")

    @precondition(lambda self: self.IMPL and self._has_model())
    @rule(data=st.data())
    @_skippable
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
        expect.eq(p.kernel.args_size, len(self._packed(cur)), f"GetParams argsSize of ops[{i}]")

    # -- execution -------------------------------------------------------------------------
    @precondition(lambda self: self._has_model())
    @rule(times=st.integers(1, 2))
    @_tolerant
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
    @_tolerant
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
    @_tolerant
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
    @_skippable
    def listing_matches(self) -> None:
        """Surviving user tasks per stream in issue order (LIST-08, DIS-05), kernel counts
        = launched - disabled after Update, seq ids unique (SEQ-04), increasing (SEQ-03) and
        stable since the capture (SEQ-05)."""
        assert self.program is not None
        listing = self._listing()
        kernels = sum(ty == TaskType.KERNEL for tasks in listing for _, ty in tasks)
        live = sum(isinstance(op, Launch) for op in self.program.ops if op is not None)
        expect.eq(kernels, live, "KERNEL tasks listed (launched - disabled after Update)",
                  clause="DIS-05")
        mapping, groups = self._match(self._user_tasks(listing))
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


def _run(machine: type[Machine], backend: Any) -> None:
    """Run the machine; a run whose only trouble was unsupported steps is UNSUPPORTED."""
    machine.backend = backend
    _UNSUPPORTED.clear()
    checks = [HealthCheck.too_slow, HealthCheck.filter_too_much]
    try:
        run_state_machine_as_test(machine, settings=settings(
            stateful_step_count=STEPS, suppress_health_check=checks))
    except (Unsatisfiable, FailedHealthCheck):
        if not _UNSUPPORTED:
            raise
    if _UNSUPPORTED:
        first = _UNSUPPORTED[0]
        _UNSUPPORTED.clear()
        raise outcomes.Unsupported(f"state machine step {first}")


@pytest.mark.clause("SETP-01", "DIS-01", "DIS-02", "UPD-05", "EXE-02", "EXE-07", "TMO-01")
def test_model_ri_state_machine(backend: Any) -> None:
    """SETP-01/DIS-01/DIS-02/UPD-05/EXE-02/EXE-07/TMO-01: random API call sequences give the
    oracle's return codes and memory."""
    _run(Machine, backend)


@pytest.mark.clause("SETP-02", "SETP-03", "SETP-10", "DIS-05", "DIS-06", "UPD-01", "UPD-04",
                    "TMO-02", "LIST-08", "SEQ-03", "SEQ-04", "SEQ-05", "GETP-05", "GETP-06",
                    "LIFE-01")
@pytest.mark.requires(Cap.SEQ_ID)
def test_model_ri_state_machine_impl(backend: Any) -> None:
    """SETP-02/03/10, DIS-05/06, UPD-01/04, TMO-02, LIST-08, SEQ-03/04/05, GETP-05/06,
    LIFE-01: the machine with faults, listings, seq ids and params checked after each step,
    and nothing left allocated afterwards."""
    before = _live(backend)
    _run(ImplMachine, backend)
    after = _live(backend)
    if before is not None:
        expect.eq((after.models, after.streams, after.events, after.allocations),
                  (before.models, before.streams, before.events, before.allocations),
                  "live (models, streams, events, allocations) after the machine", clause="LIFE-01")
