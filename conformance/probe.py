"""Capability probes: what the runtime under test can actually show, measured at backend start.

A backend *declares* capabilities; a partial runtime (a driver stub that moves no data, runs
no kernel and never blocks, or a driver without the software-SQ feature) still declares them.
The probes measure instead of assuming (DESIGN.md "Verdicts a release engineer can trust"):

* :data:`Cap.DATA_MOVEMENT`: ``aclrtMemcpy`` host -> device then device -> host gives the
  bytes back;
* :data:`Cap.KERNEL_EXEC`: a catalog kernel (the seed ``fallback_main``) launched on a plain
  stream writes its output (only measurable when data moves);
* :data:`Cap.BLOCKING_WAIT`: a captured ``aclrtValueWait`` on an unset word really blocks the
  executing stream: a short timed sync returns 507046, and a host write of the word releases
  it (how the specs release their waits);
* :data:`Cap.NEVER_TIMEOUT`: a kernel launched with the TIMEOUT attribute 0 reads back 0 from
  ``aclmdlRIKernelTaskGetAttribute``; without the TS firmware feature the real runtime cuts
  "never" to the maximum and reports that (1090 s; ``davinci_kernel_task.cc:175-179``,
  ``kernel_utils.cc:286-298``);
* the API families that answer a feature-not-supported code (``contract.NOT_SUPPORTED_CODES``,
  207000 / 207019) on a tiny captured model: capture, value tasks, listing, task type, seq id,
  get/set params, disable, update, timed sync, task groups, cond, build, names, attributes,
  labels, external events (chip / firmware / driver gates, ``capture_model_utils.cc:220-239``,
  ``api_c_task.cc:59-60``).

The probes are data (:data:`PROBES`, one :class:`Probe` per capability), each short and
self-cleaning: whatever it creates is released before the next one runs. Two kinds:

* *behaviour* probes (the four above): the capability stays only when the probe showed it;
  a probe that could not run (a setup call failed, a prerequisite is missing) removes it too,
  with the reason;
* *family* probes: only a 207000 / 207019 answer removes the capability; any other answer
  leaves it as declared (the specs judge that answer).

:func:`run_probes` returns a :class:`ProbeReport` (effective capabilities = declared minus
failed probes, one finding per probe with a one-line reason); :func:`apply` installs the
effective capabilities on the backend, and :func:`reason` gives the finding behind an absent
capability (what UNSUPPORTED outcomes print).
"""

from __future__ import annotations

import enum
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, Cap, CaptureMode, Err, EventFlag, KernelTaskParams, LaunchAttr,
    LaunchAttrId, LaunchKernelCfg, MemcpyKind, TaskParams, TaskType, ValueWaitFlag, err_name,
)
from mdlri_conformance.kernel import catalog

#: the values the memory round trip writes (int32)
ROUND_TRIP = np.arange(1, 9, dtype=np.int32)
#: the seed kernel the execution probe launches (output = input + 10)
SEED_KERNEL = "fallback_main"
#: timed sync of a probe that must complete (ms)
SYNC_MS = 5000
#: timed sync that must expire on a blocked stream (ms)
BLOCK_MS = 100
#: how long a released wait may take to drain (ms)
RELEASE_MS = 1000
#: timed sync of the cleanup (ms): bounded, a probe never hangs the start
CLEANUP_MS = 2000


class Verdict(str, enum.Enum):
    """What a probe concluded about its capability."""

    PRESENT = "present"   # shown (behaviour) or answered (family)
    ABSENT = "absent"     # not shown, or answered 207000 / 207019
    UNKNOWN = "unknown"   # could not be measured (behaviour: counts as absent)


class _Stop(Exception):
    """A probe step failed; ``verdict`` and ``reason`` say what that means."""

    def __init__(self, verdict: Verdict, reason: str) -> None:
        super().__init__(reason)
        self.verdict = verdict
        self.reason = reason


@dataclass(frozen=True)
class Probe:
    """One measurement: ``run`` returns (verdict, one-line reason) for ``cap``.

    ``needs``: capabilities that must be present (declared, and present after the probes
    that ran earlier) for the probe to run. ``family``: only an ABSENT verdict removes the
    capability (UNKNOWN keeps it as declared)."""

    cap: Cap
    name: str
    run: Callable[["Session"], tuple[Verdict, str]]
    needs: tuple[Cap, ...] = ()
    family: bool = False


@dataclass(frozen=True)
class Finding:
    """The outcome of one probe."""

    cap: str
    probe: str
    verdict: str
    reason: str
    seconds: float
    kept: bool

    def line(self) -> str:
        """``data_movement: absent (probe: memcpy H2D then D2H returned [...] for [...])``."""
        return f"{self.cap}: {self.verdict}" + (f" ({self.reason})" if self.reason else "")


@dataclass
class ProbeReport:
    """Declared and effective capabilities, with one finding per probe that ran."""

    declared: frozenset[Cap]
    effective: frozenset[Cap]
    findings: list[Finding] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def removed(self) -> list[Finding]:
        """The findings that removed a declared capability, in probe order."""
        return [f for f in self.findings if not f.kept]

    def reason(self, cap: Cap) -> str | None:
        """The finding that removed ``cap`` (None when no probe removed it)."""
        return next((f.reason for f in self.removed if f.cap == cap.value), None)

    def to_dict(self) -> dict[str, Any]:
        return {"declared": sorted(c.value for c in self.declared),
                "effective": sorted(c.value for c in self.effective),
                "removed": {f.cap: f.reason for f in self.removed},
                "seconds": round(self.seconds, 4),
                "findings": [asdict(f) for f in self.findings]}


# ---------------------------------------------------------------------------------------------
# the session: shared probe resources, released after every probe


class Session:
    """What the probes share: the backend, the capabilities so far, cleanup steps."""

    def __init__(self, backend: Any, caps: set[Cap]) -> None:
        self.b = backend
        self.caps = caps
        self._undo: list[Callable[[], Any]] = []
        self._streams: list[Any] = []
        self._binary: Any = None

    # -- checked calls ---------------------------------------------------------------------
    def ok(self, rc: Any, call: str, *, family: Cap | None = None) -> None:
        """A setup step that must succeed. A not-supported answer of a call of the probed
        family is ABSENT, any other failure UNKNOWN."""
        if rc == Err.SUCCESS:
            return
        if family is not None and rc in NOT_SUPPORTED_CODES:
            raise _Stop(Verdict.ABSENT, f"probe: {call} answered {err_name(rc)}")
        raise _Stop(Verdict.UNKNOWN, f"probe: {call} (setup) returned {err_name(rc)}")

    def later(self, fn: Callable[[], Any]) -> None:
        self._undo.append(fn)

    def cleanup(self) -> None:
        """Drain every probe stream first (the device must be done with the memory, kernels
        and models before they go), then release everything, newest first; never raises."""
        for st in self._streams:
            try:
                self.b.synchronize_stream_with_timeout(st, CLEANUP_MS)
            except Exception:  # a misbehaving backend must not stop the start
                pass
        self._streams.clear()
        while self._undo:
            fn = self._undo.pop()
            try:
                fn()
            except Exception:  # a misbehaving backend must not stop the start
                pass
        self._binary = None

    # -- resources -------------------------------------------------------------------------
    def stream(self) -> Any:
        rc, s = self.b.create_stream()
        self.ok(rc, "aclrtCreateStream")
        self.later(lambda: self.b.destroy_stream(s))
        self._streams.append(s)
        return s

    def malloc(self, nbytes: int) -> int:
        rc, addr = self.b.malloc(nbytes)
        self.ok(rc, f"aclrtMalloc({nbytes})")
        self.later(lambda: self.b.free(addr))
        return int(addr)

    def h2d(self, addr: int, values: np.ndarray) -> None:
        arr = np.ascontiguousarray(values)
        self.ok(self.b.memcpy(addr, arr.nbytes, arr, arr.nbytes, MemcpyKind.HOST_TO_DEVICE),
                "aclrtMemcpy H2D")

    def d2h(self, addr: int, like: np.ndarray) -> np.ndarray:
        out = np.zeros_like(like)
        self.ok(self.b.memcpy(out, out.nbytes, addr, out.nbytes, MemcpyKind.DEVICE_TO_HOST),
                "aclrtMemcpy D2H")
        return out

    def func(self, name: str, family: bool = False) -> Any:
        fam = Cap.KERNELS if family else None
        if self._binary is None:
            rc, h = self.b.binary_load_from_file(self.b.kernel_binary_path(), None)
            self.ok(rc, "aclrtBinaryLoadFromFile", family=fam)
            self._binary = h
            self.later(lambda: self.b.binary_unload(h))
        rc, f = self.b.binary_get_function(self._binary, name)
        self.ok(rc, f"aclrtBinaryGetFunction({name})", family=fam)
        return f

    def model(self, model: Any) -> Any:
        self.later(lambda: self.b.destroy(model))
        return model

    def capture(self, stream: Any, family: Cap | None = Cap.CAPTURE) -> None:
        """CaptureBegin (RELAXED) on ``stream``; the cleanup ends it if a step fails."""
        self.ok(self.b.capture_begin(stream, CaptureMode.RELAXED), "aclmdlRICaptureBegin",
                family=family)

        def end_if_open() -> None:
            rc, status, _ = self.b.capture_get_info(stream)
            if rc == Err.SUCCESS and status:
                rc, m = self.b.capture_end(stream)
                if rc == Err.SUCCESS and m:
                    self.b.destroy(m)
        self.later(end_if_open)

    def end(self, stream: Any, family: Cap | None = Cap.CAPTURE) -> Any:
        rc, m = self.b.capture_end(stream)
        self.ok(rc, "aclmdlRICaptureEnd", family=family)
        if not m:
            raise _Stop(Verdict.UNKNOWN, "probe: aclmdlRICaptureEnd returned no model")
        return self.model(m)

    def tasks(self, model: Any) -> list[tuple[Any, int | None]]:
        """Every listed task of ``model`` with its GetType (None when GetType failed)."""
        rc, _, n = self.b.get_streams(model, None)
        self.ok(rc, "aclmdlRIGetStreams", family=Cap.LISTING)
        rc, slots, n = self.b.get_streams(model, n)
        self.ok(rc, "aclmdlRIGetStreams", family=Cap.LISTING)
        out: list[tuple[Any, int | None]] = []
        for s in list(slots or [])[:n]:
            rc, _, m = self.b.get_tasks_by_stream(s, None)
            self.ok(rc, "aclmdlRIGetTasksByStream", family=Cap.LISTING)
            if not m:
                continue
            rc, tslots, m = self.b.get_tasks_by_stream(s, m)
            self.ok(rc, "aclmdlRIGetTasksByStream", family=Cap.LISTING)
            for t in list(tslots or [])[:m]:
                rc, ty = self.b.task_get_type(t)
                out.append((t, int(ty) if rc == Err.SUCCESS else None))
        return out

    def tiny(self, never_timeout: bool = False) -> tuple[Any, Any, Any, Any]:
        """A captured model of one seed kernel and one value write on a fresh stream:
        (stream, model, kernel task, value-write task); the kernel is launched with the
        TIMEOUT attribute 0 when ``never_timeout``."""
        s = self.stream()
        out = self.malloc(4 * catalog.SEED_ELEMENTS)
        word = self.malloc(64)
        f = self.func(SEED_KERNEL)
        self.capture(s)
        cfg = LaunchKernelCfg([LaunchAttr(LaunchAttrId.TIMEOUT, 0)]) if never_timeout else None
        args = catalog.get(SEED_KERNEL).pack(input=out, output=out)
        self.ok(self.b.launch_kernel_with_host_args(f, 1, s, cfg, args, len(args)),
                "aclrtLaunchKernelWithHostArgs (captured)", family=Cap.KERNELS)
        if Cap.VALUE_TASKS in self.caps:
            self.ok(self.b.value_write(word, 1, 0, s), "aclrtValueWrite (captured)",
                    family=Cap.VALUE_TASKS)
        model = self.end(s)
        listed = self.tasks(model)
        kernel = next((t for t, ty in listed if ty == TaskType.KERNEL), None)
        value = next((t for t, ty in listed if ty == TaskType.VALUE_WRITE), None)
        if kernel is None:
            raise _Stop(Verdict.UNKNOWN, "probe: no KERNEL task listed in the probe model "
                        f"(types {[ty for _, ty in listed]})")
        return s, model, kernel, value


def _answer(rc: Any, call: str) -> tuple[Verdict, str]:
    """A family probe's verdict from the rc of its call."""
    if rc in NOT_SUPPORTED_CODES:
        return Verdict.ABSENT, f"probe: {call} answered {err_name(rc)}"
    return Verdict.PRESENT, f"{call} answered {err_name(rc)}"


# ---------------------------------------------------------------------------------------------
# behaviour probes


def probe_data_movement(s: Session) -> tuple[Verdict, str]:
    """aclrtMemcpy H2D of [1..8] then D2H into zeros gives [1..8] back."""
    addr = s.malloc(ROUND_TRIP.nbytes)
    s.h2d(addr, ROUND_TRIP)
    back = s.d2h(addr, ROUND_TRIP)
    if not np.array_equal(back, ROUND_TRIP):
        return Verdict.ABSENT, (f"probe: memcpy H2D then D2H returned {back.tolist()} for "
                                f"{ROUND_TRIP.tolist()}")
    return Verdict.PRESENT, "memcpy H2D then D2H round-trips the bytes"


def probe_kernel_exec(s: Session) -> tuple[Verdict, str]:
    """The seed kernel (output = input + 10) launched on a plain stream writes its output."""
    if Cap.DATA_MOVEMENT not in s.caps:
        return Verdict.UNKNOWN, ("probe: kernel execution is not measurable, data does not "
                                 "move (see data_movement)")
    stream = s.stream()
    inp = s.malloc(ROUND_TRIP.nbytes)
    out = s.malloc(ROUND_TRIP.nbytes)
    s.h2d(inp, ROUND_TRIP)
    sentinel = np.full_like(ROUND_TRIP, -1)
    s.h2d(out, sentinel)
    f = s.func(SEED_KERNEL)
    args = catalog.get(SEED_KERNEL).pack(input=inp, output=out)
    s.ok(s.b.launch_kernel_with_host_args(f, 1, stream, None, args, len(args)),
         f"aclrtLaunchKernelWithHostArgs({SEED_KERNEL})")
    s.ok(s.b.synchronize_stream_with_timeout(stream, SYNC_MS),
         "aclrtSynchronizeStreamWithTimeout after the launch")
    got = s.d2h(out, ROUND_TRIP)
    want = ROUND_TRIP + catalog.SEED_MAIN_BIAS
    if not np.array_equal(got, want):
        return Verdict.ABSENT, (f"probe: kernel {SEED_KERNEL} wrote {got.tolist()}, expected "
                                f"{want.tolist()}")
    return Verdict.PRESENT, f"kernel {SEED_KERNEL} writes its output"


def probe_blocking_wait(s: Session) -> tuple[Verdict, str]:
    """A captured aclrtValueWait(EQ 1) on a word set to 0 blocks its execution: a timed sync
    of BLOCK_MS returns 507046; a host write of 1 into the word (aclrtMemcpy H2D, how the
    specs release their waits) releases it."""
    run, side = s.stream(), s.stream()
    word = s.malloc(64)
    s.ok(s.b.value_write(word, 0, 0, side), "aclrtValueWrite(0) on a plain stream")
    s.ok(s.b.synchronize_stream_with_timeout(side, SYNC_MS), "aclrtSynchronizeStreamWithTimeout")
    s.capture(run, family=None)
    s.ok(s.b.value_wait(word, 1, ValueWaitFlag.EQ, run), "aclrtValueWait (captured)")
    model = s.end(run, family=None)
    s.ok(s.b.execute_async(model, run), "aclmdlRIExecuteAsync")
    rc = s.b.synchronize_stream_with_timeout(run, BLOCK_MS)
    host = Cap.DATA_MOVEMENT in s.caps
    released = _release(s, word, side, run, host)
    if rc != Err.RT_STREAM_SYNC_TIMEOUT:
        return Verdict.ABSENT, (f"probe: a captured aclrtValueWait on an unset word did not "
                                f"block: aclrtSynchronizeStreamWithTimeout({BLOCK_MS} ms) "
                                f"returned {err_name(rc)}, expected "
                                f"{err_name(Err.RT_STREAM_SYNC_TIMEOUT)}")
    if not host:
        return Verdict.ABSENT, ("probe: a captured aclrtValueWait blocks, but the specs "
                                "release waits with a host write and data does not move "
                                "(see data_movement)")
    if released != Err.SUCCESS:
        return Verdict.ABSENT, (f"probe: a captured aclrtValueWait blocks, but a host write of "
                                f"the word (aclrtMemcpy H2D) did not release it: the sync "
                                f"returned {err_name(released)}")
    return Verdict.PRESENT, "a captured value wait on an unset word blocks until released"


def _release(s: Session, word: int, side: Any, run: Any, host: bool) -> int:
    """Write 1 into the word from the host (when ``host``) and drain the blocked stream: the
    sync rc. When that does not drain it, a value write from another stream unblocks it
    for the cleanup."""
    rc = int(Err.RT_STREAM_SYNC_TIMEOUT)
    if host:
        one = np.array([1], dtype=np.uint64)
        s.b.memcpy(word, 8, one, 8, MemcpyKind.HOST_TO_DEVICE)
        rc = int(s.b.synchronize_stream_with_timeout(run, RELEASE_MS))
    if rc == Err.RT_STREAM_SYNC_TIMEOUT:
        s.b.value_write(word, 1, 0, side)
        s.b.synchronize_stream_with_timeout(side, CLEANUP_MS)
        s.b.synchronize_stream_with_timeout(run, CLEANUP_MS)
    return rc


def probe_never_timeout(s: Session) -> tuple[Verdict, str]:
    """A kernel captured with launch attribute TIMEOUT 0 ("never") reads back TIMEOUT 0."""
    _, _, kernel, _ = s.tiny(never_timeout=True)
    rc, value = s.b.kernel_task_get_attribute(kernel, LaunchAttrId.TIMEOUT)
    s.ok(rc, "aclmdlRIKernelTaskGetAttribute(TIMEOUT)", family=Cap.NEVER_TIMEOUT)
    if value != 0:
        return Verdict.ABSENT, (f"probe: a kernel launched with TIMEOUT 0 (never) reports "
                                f"TIMEOUT {value!r}, not 0 (never-timeout needs TS firmware "
                                "support)")
    return Verdict.PRESENT, "TIMEOUT 0 (never) reads back 0"


# ---------------------------------------------------------------------------------------------
# family probes (a 207000 / 207019 answer removes the capability)


def probe_capture(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream)
    rc, _, _ = s.b.capture_get_info(stream)
    s.ok(rc, "aclmdlRICaptureGetInfo", family=Cap.CAPTURE)
    s.end(stream)
    return Verdict.PRESENT, "CaptureBegin/GetInfo/End answer"


def probe_kernels(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    f = s.func(SEED_KERNEL, family=True)
    buf = s.malloc(4 * catalog.SEED_ELEMENTS)
    args = catalog.get(SEED_KERNEL).pack(input=buf, output=buf)
    return _answer(s.b.launch_kernel_with_host_args(f, 1, stream, None, args, len(args)),
                   "aclrtLaunchKernelWithHostArgs")


def probe_value_tasks(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    word = s.malloc(64)
    return _answer(s.b.value_write(word, 0, 0, stream), "aclrtValueWrite")


def probe_listing(s: Session) -> tuple[Verdict, str]:
    s.tiny()
    return Verdict.PRESENT, "GetStreams/GetTasksByStream answer"


def probe_task_type(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()  # tiny() needs GetType to find the kernel task
    return _answer(s.b.task_get_type(kernel)[0], "aclmdlRITaskGetType")


def probe_seq_id(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return _answer(s.b.task_get_seq_id(kernel)[0], "aclmdlRITaskGetSeqId")


def probe_get_params(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return _answer(s.b.task_get_params(kernel)[0], "aclmdlRITaskGetParams")


def _kernel_params(s: Session) -> TaskParams:
    buf = s.malloc(4 * catalog.SEED_ELEMENTS)
    args = catalog.get(SEED_KERNEL).pack(input=buf, output=buf)
    return TaskParams(type=TaskType.KERNEL, kernel=KernelTaskParams(
        func_handle=s.func(SEED_KERNEL), cfg=None, args=args, is_host_args=1,
        args_size=len(args), num_blocks=1))


def probe_set_params(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return _answer(s.b.task_set_params(kernel, _kernel_params(s)), "aclmdlRITaskSetParams")


def probe_disable(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return _answer(s.b.task_disable(kernel), "aclmdlRITaskDisable")


def probe_update(s: Session) -> tuple[Verdict, str]:
    _, model, _, _ = s.tiny()
    return _answer(s.b.update(model), "aclmdlRIUpdate")


def probe_sync_timeout(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    return _answer(s.b.synchronize_stream_with_timeout(stream, SYNC_MS),
                   "aclrtSynchronizeStreamWithTimeout")


def probe_task_groups(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream, family=None)
    rc = s.b.capture_task_grp_begin(stream)
    if rc == Err.SUCCESS:
        s.b.capture_task_grp_end(stream)
    return _answer(rc, "aclmdlRICaptureTaskGrpBegin")


def probe_cond(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    s.capture(stream, family=None)
    rc, _, parent = s.b.capture_get_info(stream)
    s.ok(rc, "aclmdlRICaptureGetInfo")
    return _answer(s.b.cond_handle_create(parent, 0, 0)[0], "aclmdlRICondHandleCreate")


def probe_build(s: Session) -> tuple[Verdict, str]:
    rc, model = s.b.build_begin(0)
    if rc == Err.SUCCESS and model:
        s.model(model)
    return _answer(rc, "aclmdlRIBuildBegin")


def probe_names(s: Session) -> tuple[Verdict, str]:
    _, model, _, _ = s.tiny()
    return _answer(s.b.set_name(model, "mdlri-probe"), "aclmdlRISetName")


def probe_attributes(s: Session) -> tuple[Verdict, str]:
    _, _, kernel, _ = s.tiny()
    return _answer(s.b.kernel_task_get_attribute(kernel, LaunchAttrId.TIMEOUT)[0],
                   "aclmdlRIKernelTaskGetAttribute")


def probe_labels(s: Session) -> tuple[Verdict, str]:
    rc, label = s.b.create_label()
    if rc == Err.SUCCESS and label:
        s.later(lambda: s.b.destroy_label(label))
    return _answer(rc, "aclrtCreateLabel")


def probe_external_events(s: Session) -> tuple[Verdict, str]:
    stream = s.stream()
    rc, ev = s.b.create_event_ex_with_flag(EventFlag.SYNC)
    s.ok(rc, "aclrtCreateEventExWithFlag")
    s.later(lambda: s.b.destroy_event(ev))
    return _answer(s.b.record_event_with_flag(ev, stream, 0), "aclrtRecordEventWithFlag")


_TINY = (Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE)

#: every probe, in the order they run; later probes see the verdicts of earlier ones
PROBES: tuple[Probe, ...] = (
    Probe(Cap.DATA_MOVEMENT, "memory round trip", probe_data_movement),
    Probe(Cap.KERNEL_EXEC, "seed kernel output", probe_kernel_exec,
          needs=(Cap.KERNELS, Cap.SYNC_TIMEOUT)),
    Probe(Cap.CAPTURE, "capture", probe_capture, family=True),
    Probe(Cap.KERNELS, "kernel launch", probe_kernels, family=True),
    Probe(Cap.VALUE_TASKS, "value write", probe_value_tasks, family=True),
    Probe(Cap.SYNC_TIMEOUT, "timed sync", probe_sync_timeout, family=True),
    Probe(Cap.LISTING, "listing", probe_listing, needs=_TINY, family=True),
    Probe(Cap.TASK_TYPE, "task type", probe_task_type, needs=_TINY, family=True),
    Probe(Cap.SEQ_ID, "seq id", probe_seq_id, needs=_TINY, family=True),
    Probe(Cap.GET_PARAMS, "get params", probe_get_params, needs=_TINY, family=True),
    Probe(Cap.SET_PARAMS, "set params", probe_set_params, needs=_TINY, family=True),
    Probe(Cap.DISABLE, "disable", probe_disable, needs=_TINY, family=True),
    Probe(Cap.UPDATE, "update", probe_update, needs=_TINY, family=True),
    Probe(Cap.TASK_GROUPS, "task groups", probe_task_groups, needs=(Cap.CAPTURE,), family=True),
    Probe(Cap.COND, "cond", probe_cond, needs=(Cap.CAPTURE,), family=True),
    Probe(Cap.BUILD, "build", probe_build, family=True),
    Probe(Cap.NAMES, "names", probe_names, needs=_TINY, family=True),
    Probe(Cap.ATTRIBUTES, "attributes", probe_attributes, needs=_TINY, family=True),
    Probe(Cap.LABELS, "labels", probe_labels, family=True),
    Probe(Cap.EXTERNAL_EVENTS, "external events", probe_external_events, family=True),
    Probe(Cap.NEVER_TIMEOUT, "never timeout", probe_never_timeout,
          needs=(*_TINY, Cap.ATTRIBUTES)),
    Probe(Cap.BLOCKING_WAIT, "blocking value wait", probe_blocking_wait,
          needs=(Cap.CAPTURE, Cap.VALUE_TASKS, Cap.SYNC_TIMEOUT)),
)


# ---------------------------------------------------------------------------------------------
# running, applying, reading


def run_probes(backend: Any, probes: tuple[Probe, ...] = PROBES) -> ProbeReport:
    """Run every probe whose capability the backend declares; the effective capabilities."""
    declared = frozenset(backend.capabilities)
    caps = set(declared)
    report = ProbeReport(declared, declared)
    start = time.monotonic()
    for p in probes:
        if p.cap not in declared:
            continue
        t0 = time.monotonic()
        missing = [c.value for c in p.needs if c not in caps]
        if missing:
            verdict, why = Verdict.UNKNOWN, f"probe: not measurable without {', '.join(missing)}"
        else:
            verdict, why = _run_one(p, Session(backend, caps))
        kept = verdict is Verdict.PRESENT or (p.family and verdict is Verdict.UNKNOWN)
        if not kept:
            caps.discard(p.cap)
        report.findings.append(Finding(p.cap.value, p.name, verdict.value, why,
                                       round(time.monotonic() - t0, 4), kept))
    report.effective = frozenset(caps)
    report.seconds = time.monotonic() - start
    return report


def _run_one(p: Probe, s: Session) -> tuple[Verdict, str]:
    try:
        return p.run(s)
    except _Stop as stop:
        return stop.verdict, stop.reason
    except Exception as exc:  # a harness fault in the backend: not shown
        return Verdict.UNKNOWN, f"probe error: {type(exc).__name__}: {exc}"
    finally:
        s.cleanup()


_REPORTS: dict[int, ProbeReport] = {}


def apply(backend: Any, report: ProbeReport) -> None:
    """Install the effective capabilities on ``backend`` and remember the report."""
    backend.capabilities = report.effective
    _REPORTS[id(backend)] = report


def report_of(backend: Any) -> ProbeReport | None:
    """The report :func:`apply` installed on ``backend`` (None when it was not probed)."""
    return _REPORTS.get(id(backend))


def forget(backend: Any) -> None:
    """Drop the report of a backend that is being closed."""
    _REPORTS.pop(id(backend), None)


def reason(backend: Any, cap: Cap) -> str:
    """Why ``cap`` is absent: the probe's finding, else the backend's own reason, else ''."""
    rep = report_of(backend)
    found = rep.reason(cap) if rep else None
    if found:
        return found
    fn = getattr(backend, "unsupported_reason", None)
    why = fn(cap.value) if callable(fn) else None
    return why if isinstance(why, str) else ""


def has(backend: Any, cap: Cap) -> bool:
    """Whether the backend (after the probes) has ``cap``."""
    return cap in getattr(backend, "capabilities", frozenset())
