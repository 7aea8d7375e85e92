"""A stateful machine over captures in several threads, capture modes and the model lifecycle.

Up to :data:`N_STREAMS` streams are captured at once by worker threads (thread 1 and 2; thread 0
is the spec's own thread, which never begins a capture, so a mode a runtime leaks can never
outlive the example). Each capture holds a ``fill`` kernel per stream and may fork side streams
(record on a capturing stream, wait on a free one, XS-01), work on them and rejoin them (XS-02).
The reference is :class:`conformance.engine.modes.CaptureModes` for which thread an unsafe call
is blocked in, and the machine's own bookkeeping of open captures and ended models.

Documented rules (:func:`test_capture_state_machine`): CaptureBegin in any mode (CAP-04); an
unsafe call (aclrtMemset on memory allocated before every capture, MODE-01) is refused with
107030 exactly where MODE-02/03/04 say; CaptureEnd from the beginning thread succeeds when every
side stream rejoined and returns 107025 otherwise (XS-02); from another thread it returns 107038
for GLOBAL / THREAD_LOCAL (CAP-14) and succeeds for RELAXED (CAP-15); ended models execute (EXE-02)
and are destroyed (LIFE-01).

The implementation machine (:func:`test_capture_state_machine_impl`) adds exchange modes
(MODE-05 .. MODE-09, MODE-11), CaptureEnd on a joined stream (CAP-11), what a failed or
wrong-thread CaptureEnd leaves (CAP-13, CAP-14: every stream NONE), capture status (STAT-01,
STAT-04), Destroy of a capturing model (LIFE-02), ExecuteAsync of a capturing model (EXE-04), on
a capturing stream (EXE-05) and of NULL (EXE-09), and a second Destroy (LIFE-06, only where
handles are validated, Q-01).

After a wrong-thread CaptureEnd (107038) a runtime may keep the capture or end it (the
documents say only that the end must come from the beginning thread; the code ends it, CAP-14):
the documented machine asks CaptureGetInfo and follows either; the implementation machine
requires NONE. The leaked model is destroyed from its handle (Q-05).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (Bundle, RuleBasedStateMachine, consumes, multiple, precondition,
                                 rule)

from mdlri_conformance.backends.contract import UNWRITTEN, Cap, CaptureMode, CaptureStatus, Err
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.engine.machine import run, tolerant
from mdlri_conformance.conformance.engine.modes import CaptureModes
from mdlri_conformance.conformance.harness import Dev, Worker
from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.requires(Cap.CAPTURE, Cap.CAPTURE_MODES, Cap.THREADS, Cap.KERNELS,
                                  Cap.CROSS_STREAM, Cap.SYNC_TIMEOUT)

N = catalog.SEED_ELEMENTS
N_STREAMS = 4
#: worker threads 1..N_WORKERS begin captures; thread 0 is the spec's thread
N_WORKERS = 2
THREADS = st.integers(0, N_WORKERS)
WORKERS = st.integers(1, N_WORKERS)
MODES = st.sampled_from((CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL, CaptureMode.RELAXED))
STEPS = 25
BATCHES = 6
SYNC_MS = 5000
BLOCKED = Err.RT_CAPTURE_MODE_NOT_SUPPORT


@dataclass
class Open:
    """An open capture: its origin stream, mode, beginning thread, model (from GetInfo), side
    streams (stream -> rejoined to the origin since its last work) and ``hands`` (side stream
    -> the side stream that forked from its last task, a record: XS-02 counts that record as
    joined when the stream waiting on it is joined in turn)."""

    origin: int
    mode: int
    thread: int
    model: Any
    sides: dict[int, bool] = field(default_factory=dict)
    hands: dict[int, int] = field(default_factory=dict)

    @property
    def streams(self) -> list[int]:
        return [self.origin, *self.sides]

    def _joined(self, side: int, seen: frozenset[int] = frozenset()) -> bool:
        if self.sides[side]:
            return True
        nxt = self.hands.get(side)
        return nxt is not None and nxt not in seen and self._joined(nxt, seen | {side})

    @property
    def joined_back(self) -> bool:
        """XS-02: every side stream's last task is a record another stream waits on, and
        following those waits leads to the origin."""
        return all(self._joined(s) for s in self.sides)


class CaptureMachine(RuleBasedStateMachine):
    """Documented behaviour: CAP-04, CAP-14, CAP-15, XS-02, MODE-02/03/04, EXE-02."""

    backend: ClassVar[Any] = None
    IMPL: ClassVar[bool] = False
    models = Bundle("models")
    destroyed = Bundle("destroyed")

    def __init__(self) -> None:
        super().__init__()
        self.dev = Dev(self.backend)
        self.workers: dict[int, Worker] = {}
        self.modes = CaptureModes()
        self.open: dict[int, Open] = {}
        self.member: dict[int, int] = {}  # stream -> origin of the capture it belongs to
        self.live: list[Any] = []
        try:
            d = self.dev
            self.streams = [d.stream() for _ in range(N_STREAMS)]
            # allocated before any capture begins: the unsafe-call probe (MODE-01)
            self.scratch = d.buffer(n=N)
            self.outs = [d.buffer(n=N) for _ in range(N_STREAMS)]
            d.func("fill")
        except BaseException:
            self.dev.close()
            raise

    # -- threads ---------------------------------------------------------------------------
    def _call(self, thread: int, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` in ``thread`` (0: here; a worker started on first use otherwise)."""
        if thread == 0:
            return fn()
        if thread not in self.workers:
            self.workers[thread] = Worker(self.backend)
        return self.workers[thread].call(fn)

    def _free(self) -> list[int]:
        return [s for s in range(N_STREAMS) if s not in self.member]

    def _fill_rc(self, s: int, value: int) -> int:
        out = self.outs[s]
        return self.dev.launch_rc("fill", self.streams[s], out=out, n=out.n, value=value)

    # -- capture -----------------------------------------------------------------------------
    @precondition(lambda self: bool(self._free()))
    @rule(data=st.data(), thread=WORKERS, mode=MODES)
    @tolerant
    def begin(self, data: st.DataObject, thread: int, mode: int) -> None:
        """CaptureBegin in a worker thread and one captured kernel (CAP-04)."""
        s = data.draw(st.sampled_from(self._free()), label="stream")
        stream = self.streams[s]
        rc = self._call(thread, lambda: self.backend.capture_begin(stream, mode))
        expect.ok(rc, f"aclmdlRICaptureBegin(stream {s}, {CaptureMode(mode).name}) in thread "
                      f"{thread}", clause="CAP-04")
        rc, status, model = self._call(thread, lambda: self.backend.capture_get_info(stream))
        expect.ok(rc, "aclmdlRICaptureGetInfo after CaptureBegin")
        self.open[s] = Open(s, mode, thread, model)
        self.member[s] = s
        self.modes.begin(s, mode, thread)
        expect.ok(self._call(thread, lambda: self._fill_rc(s, 10 + s)),
                  f"kernel launch during the capture of stream {s}")

    def _captures(self) -> list[int]:
        return sorted(self.open)

    @precondition(lambda self: bool(self.open) and bool(self._free()))
    @rule(data=st.data())
    @tolerant
    def fork(self, data: st.DataObject) -> None:
        """Record an event on a capturing stream and make a free stream wait on it: the free
        stream joins the capture (XS-01)."""
        origin = data.draw(st.sampled_from(self._captures()), label="capture")
        cap = self.open[origin]
        src = data.draw(st.sampled_from([s for s in cap.streams
                                         if s == origin or not cap.sides[s]]), label="from")
        side = data.draw(st.sampled_from(self._free()), label="side")
        self._edge(cap, src, side)
        if src != origin:
            cap.hands[src] = side  # src's last task is now the record side waits on
        cap.sides[side] = False
        self.member[side] = origin

    @precondition(lambda self: any(c.sides for c in self.open.values()))
    @rule(data=st.data(), rejoin=st.booleans())
    @tolerant
    def side_step(self, data: st.DataObject, rejoin: bool) -> None:
        """A side stream captures a kernel (and no longer counts as rejoined, XS-03), or
        rejoins its origin: record on it, the origin waits (XS-02)."""
        origin = data.draw(st.sampled_from([o for o in self._captures() if self.open[o].sides]),
                           label="capture")
        cap = self.open[origin]
        side = data.draw(st.sampled_from(sorted(cap.sides)), label="side")
        if not rejoin:
            expect.ok(self._call(cap.thread, lambda: self._fill_rc(side, 20 + side)),
                      f"kernel launch on side stream {side}")
            cap.sides[side] = False
            cap.hands.pop(side, None)
            return
        self._side_rejoin(cap, side)

    @precondition(lambda self: bool(self.open))
    @rule(target=models, data=st.data(), thread=THREADS)
    @tolerant
    def end(self, data: st.DataObject, thread: int) -> Any:
        """CaptureEnd on the origin from ``thread``: 107038 from another thread unless the
        mode is RELAXED (CAP-14, CAP-15); 107025 with a side stream not rejoined (XS-02);
        otherwise the capture's model (CAP-04)."""
        origin = data.draw(st.sampled_from(self._captures()), label="capture")
        cap = self.open[origin]
        stream = self.streams[origin]
        rc, m = self._call(thread, lambda: self.backend.capture_end(stream))
        wrong = thread != cap.thread and cap.mode != CaptureMode.RELAXED
        where = (f"aclmdlRICaptureEnd(stream {origin}, {CaptureMode(cap.mode).name} begun in "
                 f"thread {cap.thread}) from thread {thread}")
        if wrong:
            expect.rc(rc, Err.RT_STREAM_CAPTURE_WRONG_THREAD, where, clause="CAP-14")
            return self._after_wrong_thread(cap)
        if not cap.joined_back:
            expect.rc(rc, Err.RT_STREAM_UNJOINED, f"{where} with a side stream not rejoined",
                      clause="XS-02")
            self._closed(cap)
            if self.IMPL:
                expect.eq(m, None, "modelRI out-param of the failed CaptureEnd", clause="CAP-13")
                self._expect_none(cap, "after the failed CaptureEnd", "CAP-13")
            return multiple()
        expect.ok(rc, where, clause="CAP-15" if thread != cap.thread else "CAP-04")
        expect.eq(m, cap.model, "modelRI from CaptureEnd (the model GetInfo showed)")
        self._closed(cap)
        self.live.append(m)
        if self.IMPL:
            self._expect_none(cap, "after CaptureEnd", "STAT-04")
        return m

    def _after_wrong_thread(self, cap: Open) -> Any:
        """A wrong-thread end: the capture is over if the origin left capture (CAP-14, what
        the code does; required in the implementation machine), else it is ended from its
        own thread. The leaked model of the first case is destroyed from its handle (Q-05)."""
        stream = self.streams[cap.origin]
        rc, status, _ = self.backend.capture_get_info(stream)
        expect.ok(rc, "aclmdlRICaptureGetInfo after a wrong-thread CaptureEnd")
        if self.IMPL:
            expect.eq(status, CaptureStatus.NONE, "origin status after a wrong-thread "
                      "CaptureEnd", clause="CAP-14")
        if status == CaptureStatus.NONE:
            self._closed(cap)
            self.backend.destroy(cap.model)  # whatever it answers, nothing else owns it
            return multiple()
        for side, back in list(cap.sides.items()):
            if not back:
                self._side_rejoin(cap, side)
        rc, m = self._call(cap.thread, lambda: self.backend.capture_end(stream))
        expect.ok(rc, "aclmdlRICaptureEnd from the beginning thread after a refused one")
        self._closed(cap)
        self.live.append(m)
        return m

    def _side_rejoin(self, cap: Open, side: int) -> None:
        """Record on the side stream, the origin waits: the side is joined back (XS-02)."""
        self._edge(cap, side, cap.origin)
        cap.sides[side] = True
        cap.hands.pop(side, None)

    def _edge(self, cap: Open, src: int, dst: int) -> None:
        """In the capture's thread: record a new event on ``src``, ``dst`` waits on it."""
        ev = self.dev.event()
        expect.ok(self._call(cap.thread, lambda: self.backend.record_event(
            ev, self.streams[src])), f"aclrtRecordEvent on capturing stream {src}")
        expect.ok(self._call(cap.thread, lambda: self.backend.stream_wait_event(
            self.streams[dst], ev)), f"aclrtStreamWaitEvent: stream {dst} waits on stream {src}")

    def _closed(self, cap: Open) -> None:
        del self.open[cap.origin]
        for s in cap.streams:
            self.member.pop(s, None)
        self.modes.end(cap.origin)

    def _expect_none(self, cap: Open, when: str, clause: str) -> None:
        for s in cap.streams:
            rc, status, _ = self.backend.capture_get_info(self.streams[s])
            expect.ok(rc, f"aclmdlRICaptureGetInfo(stream {s}) {when}")
            expect.eq(status, CaptureStatus.NONE, f"status of stream {s} {when}", clause=clause)

    # -- capture modes ---------------------------------------------------------------------------
    @rule(thread=THREADS)
    @tolerant
    def unsafe(self, thread: int) -> None:
        """aclrtMemset on memory allocated before the captures: 107030 where the active
        captures' modes block ``thread`` (MODE-02, MODE-03, MODE-04, MODE-07, MODE-08, MODE-11),
        0 elsewhere."""
        buf = self.scratch
        rc = self._call(thread, lambda: self.backend.memset(buf.addr, buf.nbytes, 0x11,
                                                            buf.nbytes))
        blocked = self.modes.blocked(thread)
        active = ", ".join(f"stream {o}: {CaptureMode(c.mode).name} by thread {c.thread}"
                           for o, c in sorted(self.open.items())) or "none"
        expect.rc(rc, BLOCKED if blocked else Err.SUCCESS,
                  f"aclrtMemset in thread {thread} (exchange mode "
                  f"{CaptureMode(self.modes.exchange_modes.get(thread, 0)).name}; captures: "
                  f"{active})", clause="MODE-03" if blocked else "MODE-04")

    @precondition(lambda self: self.IMPL)
    @rule(thread=WORKERS, mode=MODES)
    @tolerant
    def exchange(self, thread: int, mode: int) -> None:
        """ThreadExchangeMode in a worker: returns the thread's previous exchange mode, GLOBAL
        at first, independent of captures (MODE-05, MODE-09)."""
        rc, prev = self._call(thread, lambda: self.backend.capture_thread_exchange_mode(mode))
        expect.ok(rc, f"aclmdlRICaptureThreadExchangeMode({CaptureMode(mode).name}) in thread "
                      f"{thread}")
        expect.eq(prev, self.modes.exchange(thread, mode),
                  f"previous exchange mode of thread {thread}", clause="MODE-05")

    # -- models ------------------------------------------------------------------------------
    @rule(model=models, data=st.data())
    @tolerant
    def execute(self, model: Any, data: st.DataObject) -> None:
        """ExecuteAsync of an ended model on a free stream and a timed sync: 0 (EXE-02)."""
        free = self._free()
        if not free:
            return
        s = data.draw(st.sampled_from(free), label="stream")
        expect.ok(self.backend.execute_async(model, self.streams[s]),
                  f"aclmdlRIExecuteAsync on free stream {s}", clause="EXE-02")
        expect.ok(self.backend.synchronize_stream_with_timeout(self.streams[s], SYNC_MS),
                  f"aclrtSynchronizeStreamWithTimeout(stream {s})", clause="EXE-02")

    @rule(target=destroyed, model=consumes(models))
    @tolerant
    def destroy(self, model: Any) -> Any:
        """Destroy an ended model: 0 (LIFE-01)."""
        expect.ok(self.backend.destroy(model), "aclmdlRIDestroy", clause="LIFE-01")
        self.live.remove(model)
        return model

    # -- implementation level ----------------------------------------------------------------
    @precondition(lambda self: self.IMPL and any(c.sides for c in self.open.values()))
    @rule(data=st.data())
    @tolerant
    def end_on_side(self, data: st.DataObject) -> None:
        """CaptureEnd on a joined side stream: 107036, the capture stays ACTIVE (CAP-11)."""
        origin = data.draw(st.sampled_from([o for o in self._captures() if self.open[o].sides]),
                           label="capture")
        cap = self.open[origin]
        side = data.draw(st.sampled_from(sorted(cap.sides)), label="side")
        rc, _ = self._call(cap.thread, lambda: self.backend.capture_end(self.streams[side]))
        expect.rc(rc, Err.RT_STREAM_CAPTURE_UNMATCHED, f"aclmdlRICaptureEnd on side stream "
                  f"{side}", clause="CAP-11")
        self._expect_active(cap, "after CaptureEnd on a side stream", "CAP-11")

    def _expect_active(self, cap: Open, when: str, clause: str) -> None:
        for s in cap.streams:
            rc, status, m = self.backend.capture_get_info(self.streams[s])
            expect.ok(rc, f"aclmdlRICaptureGetInfo(stream {s}) {when}")
            expect.eq((status, m), (CaptureStatus.ACTIVE, cap.model),
                      f"status and model of stream {s} {when}", clause=clause)

    @precondition(lambda self: self.IMPL)
    @rule(data=st.data())
    @tolerant
    def status(self, data: st.DataObject) -> None:
        """CaptureGetInfo: ACTIVE with the capture's model on its streams (STAT-01), NONE
        elsewhere (STAT-04)."""
        s = data.draw(st.integers(0, N_STREAMS - 1), label="stream")
        rc, status, m = self.backend.capture_get_info(self.streams[s])
        expect.ok(rc, f"aclmdlRICaptureGetInfo(stream {s})")
        if s in self.member:
            expect.eq((status, m), (CaptureStatus.ACTIVE, self.open[self.member[s]].model),
                      f"status and model of capturing stream {s}", clause="STAT-01")
        else:
            expect.eq(status, CaptureStatus.NONE, f"status of stream {s}", clause="STAT-04")

    @precondition(lambda self: self.IMPL and bool(self.open))
    @rule(data=st.data())
    @tolerant
    def destroy_capturing(self, data: st.DataObject) -> None:
        """Destroy of a model still capturing: 107026, the capture goes on (LIFE-02)."""
        cap = self.open[data.draw(st.sampled_from(self._captures()), label="capture")]
        expect.rc(self.backend.destroy(cap.model), Err.RT_MODEL_CAPTURED,
                  "aclmdlRIDestroy of a capturing model", clause="LIFE-02")
        self._expect_active(cap, "after the refused Destroy", "LIFE-02")

    @precondition(lambda self: self.IMPL and bool(self.open) and bool(self._free()))
    @rule(data=st.data())
    @tolerant
    def execute_capturing_model(self, data: st.DataObject) -> None:
        """ExecuteAsync of a model still capturing: 107026 (EXE-04)."""
        cap = self.open[data.draw(st.sampled_from(self._captures()), label="capture")]
        s = data.draw(st.sampled_from(self._free()), label="stream")
        expect.rc(self.backend.execute_async(cap.model, self.streams[s]), Err.RT_MODEL_CAPTURED,
                  "aclmdlRIExecuteAsync of a capturing model", clause="EXE-04")

    @precondition(lambda self: self.IMPL and bool(self.open))
    @rule(data=st.data(), model=models)
    @tolerant
    def execute_on_capturing_stream(self, data: st.DataObject, model: Any) -> None:
        """ExecuteAsync of an ended model on a capturing stream: 107027 (EXE-05)."""
        cap = self.open[data.draw(st.sampled_from(self._captures()), label="capture")]
        s = data.draw(st.sampled_from(cap.streams), label="capturing stream")
        expect.rc(self.backend.execute_async(model, self.streams[s]), Err.RT_STREAM_CAPTURED,
                  f"aclmdlRIExecuteAsync on capturing stream {s}", clause="EXE-05")

    @precondition(lambda self: self.IMPL)
    @rule(s=st.integers(0, N_STREAMS - 1))
    @tolerant
    def execute_null(self, s: int) -> None:
        """ExecuteAsync(NULL model): 100000 from the ACL layer (EXE-09)."""
        expect.rc(self.backend.execute_async(None, self.streams[s]), Err.INVALID_PARAM,
                  "aclmdlRIExecuteAsync(NULL)", clause="EXE-09")

    @precondition(lambda self: self.IMPL
                  and Cap.HANDLE_VALIDATION in self.backend.capabilities)
    @rule(model=destroyed)
    @tolerant
    def destroy_again(self, model: Any) -> None:
        """A second Destroy of a destroyed model: 107017 (LIFE-06, Q-01)."""
        expect.rc(self.backend.destroy(model), Err.RT_INVALID_HANDLE,
                  "aclmdlRIDestroy of a destroyed model", clause="LIFE-06")

    # -- teardown ------------------------------------------------------------------------------
    def teardown(self) -> None:
        """End every open capture from its own thread (rejoining its side streams), destroy
        the models, stop the workers (a leaked thread mode dies with its thread), free the
        rest."""
        try:
            for cap in list(self.open.values()):
                try:
                    for side, back in list(cap.sides.items()):
                        if not back:
                            self._side_rejoin(cap, side)
                    stream = self.streams[cap.origin]
                    rc, m = self._call(cap.thread, lambda: self.backend.capture_end(stream))
                    if rc == Err.SUCCESS and m not in (None, UNWRITTEN):
                        self.live.append(m)
                except Exception:  # a failing backend: clean up what can be
                    pass
            for m in self.live:
                self.backend.destroy(m)
            for s in self.streams:
                self.backend.synchronize_stream_with_timeout(s, 2000)
        finally:
            for w in self.workers.values():
                w.close()
            self.dev.close()


class CaptureImplMachine(CaptureMachine):
    """Adds exchange modes, capture status, CAP-11/13, LIFE-02/06, EXE-04/05/09."""

    IMPL: ClassVar[bool] = True


def _run(machine: type[CaptureMachine], backend: Any, batch: int) -> None:
    machine.backend = backend
    run(machine, STEPS, batch, BATCHES)


@pytest.mark.clause("CAP-04", "CAP-14", "CAP-15", "XS-02", "MODE-02", "MODE-03", "MODE-04",
                    "EXE-02")
@pytest.mark.parametrize("batch", range(BATCHES))
def test_capture_state_machine(backend: Any, batch: int) -> None:
    """CAP-04/14/15, XS-02, MODE-02/03/04, EXE-02: captures in several threads and modes give
    the documented return codes, and unsafe calls are blocked exactly where the modes say."""
    _run(CaptureMachine, backend, batch)


@pytest.mark.clause("MODE-05", "MODE-07", "MODE-08", "MODE-09", "MODE-11", "CAP-11", "CAP-13",
                    "CAP-14", "STAT-01", "STAT-04", "LIFE-02", "LIFE-06", "EXE-04", "EXE-05",
                    "EXE-09")
@pytest.mark.parametrize("batch", range(BATCHES))
def test_capture_state_machine_impl(backend: Any, batch: int) -> None:
    """MODE-05/07/08/09/11, CAP-11/13/14, STAT-01/04, LIFE-02/06, EXE-04/05/09: the machine
    with exchange modes, capture status, refused Destroy/Execute and stale handles."""
    _run(CaptureImplMachine, backend, batch)
