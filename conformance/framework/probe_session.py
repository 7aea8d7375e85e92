"""The probes' vocabulary and shared state: verdicts, :class:`Probe` (one per capability),
findings and the :class:`ProbeReport`, and the :class:`Session` whose resources are released
after every probe (:mod:`.probe` runs them; :mod:`.probe_checks` holds them)."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, Cap, CaptureMode, Err, LaunchAttr, LaunchAttrId, LaunchKernelCfg,
    MemcpyKind, TaskType, err_name,
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
    HUNG = "hung"         # a call never returned: kept as declared, the specs judge the hang
    WRONG = "wrong"       # answered, wrongly: kept as declared, and the gate fails with it
    MEASURED = "measured"  # a measurement (no capability): its figures are in the timings


class ProbeStop(Exception):
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
class Measurement:
    """A figure measured at start, not a capability (the cost of a first execution): ``run``
    stores its figures in :attr:`Session.timings` and returns (verdict, one-line reason).
    ``deadline_s``: its own deadline (None: the run's)."""

    key: str
    name: str
    run: Callable[["Session"], tuple[Verdict, str]]
    needs: tuple[Cap, ...] = ()
    deadline_s: float | None = None


@dataclass(frozen=True)
class Finding:
    """The outcome of one probe. ``fails_gate``: the probe saw a wrong answer, or took away
    a capability the backend promised (:func:`.probe.run_probes`)."""

    cap: str
    probe: str
    verdict: str
    reason: str
    seconds: float
    kept: bool
    fails_gate: bool = False

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
    #: figures measured at start (:data:`.probe_checks.MEASUREMENTS`), e.g. the seconds of a
    #: model's first and second execution
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def removed(self) -> list[Finding]:
        """The findings that removed a declared capability, in probe order."""
        return [f for f in self.findings if not f.kept]

    @property
    def failures(self) -> list[Finding]:
        """The findings that fail the gate (a wrong answer, a promise broken), in order."""
        return [f for f in self.findings if f.fails_gate]

    def reason(self, cap: Cap) -> str | None:
        """The finding that removed ``cap`` (None when no probe removed it)."""
        return next((f.reason for f in self.removed if f.cap == cap.value), None)

    def to_dict(self) -> dict[str, Any]:
        return {"declared": sorted(c.value for c in self.declared),
                "effective": sorted(c.value for c in self.effective),
                "removed": {f.cap: f.reason for f in self.removed},
                "failures": {f.cap: f.reason for f in self.failures},
                "timings": dict(self.timings),
                "seconds": round(self.seconds, 4),
                "findings": [asdict(f) for f in self.findings]}


# ---------------------------------------------------------------------------------------------
# the session: shared probe resources, released after every probe


class Session:
    """What the probes share: the backend, the capabilities so far, cleanup steps."""

    def __init__(self, backend: Any, caps: set[Cap]) -> None:
        self.b = backend
        self.caps = caps
        #: figures a measurement stores (:class:`Measurement`)
        self.timings: dict[str, float] = {}
        self._undo: list[Callable[[], Any]] = []
        self._streams: list[Any] = []
        self._binary: Any = None

    # -- checked calls ---------------------------------------------------------------------
    def ok(self, rc: Any, call: str, *, family: Cap | None = None,
           environment: bool = False) -> None:
        """A step that must succeed (every probe calls with valid arguments). A
        not-supported answer (207000 / 207019) is ABSENT for a call of the probed ``family``
        and UNKNOWN (not measurable) for any other call; any other failure is a WRONG answer,
        with the call and its code as evidence, except for an ``environment`` step (loading
        the kernel binary: a file the runtime cannot load is no wrong answer): UNKNOWN."""
        if rc == Err.SUCCESS:
            return
        if rc in NOT_SUPPORTED_CODES:
            if family is not None:
                raise ProbeStop(Verdict.ABSENT, f"probe: {call} answered {err_name(rc)}")
            raise ProbeStop(Verdict.UNKNOWN, f"probe: not measurable: {call} answered "
                                             f"{err_name(rc)}")
        if environment:
            raise ProbeStop(Verdict.UNKNOWN, f"probe: not measurable: {call} returned "
                                             f"{err_name(rc)}")
        raise ProbeStop(Verdict.WRONG, f"probe: {call} returned {err_name(rc)}, expected "
                                       f"{err_name(Err.SUCCESS)}")

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
            self.ok(rc, "aclrtBinaryLoadFromFile", family=fam, environment=True)
            self._binary = h
            self.later(lambda: self.b.binary_unload(h))
        rc, f = self.b.binary_get_function(self._binary, name)
        self.ok(rc, f"aclrtBinaryGetFunction({name})", family=fam, environment=True)
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
            raise ProbeStop(Verdict.WRONG, "probe: aclmdlRICaptureEnd returned 0 (SUCCESS) "
                                           "and no model")
        return self.model(m)

    def tasks(self, model: Any) -> list[tuple[Any, int | None]]:
        """Every listed task of ``model`` with its GetType (None when GetType answered
        207000 / 207019; any other failure is a WRONG answer)."""
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
                if rc not in NOT_SUPPORTED_CODES:
                    self.ok(rc, "aclmdlRITaskGetType of a listed task")
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
            # every type known and none KERNEL: the captured launch was lost or mistyped
            known = all(ty is not None for _, ty in listed)
            raise ProbeStop(Verdict.WRONG if known else Verdict.UNKNOWN,
                            "probe: no KERNEL task listed in the probe model "
                            f"(types {[ty for _, ty in listed]})")
        return s, model, kernel, value


def answer(rc: Any, call: str) -> tuple[Verdict, str]:
    """A family probe's verdict from the rc of its call (made with valid arguments): 0 is
    PRESENT, 207000 / 207019 ABSENT, anything else a WRONG answer."""
    if rc == Err.SUCCESS:
        return Verdict.PRESENT, f"{call} answered {err_name(rc)}"
    if rc in NOT_SUPPORTED_CODES:
        return Verdict.ABSENT, f"probe: {call} answered {err_name(rc)}"
    return Verdict.WRONG, (f"probe: {call} returned {err_name(rc)}, expected "
                           f"{err_name(Err.SUCCESS)}")
