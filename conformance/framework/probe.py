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
* :data:`Cap.PAGEABLE_DETECTION`: ``aclrtPointerGetAttributes`` of a malloc'd host buffer
  reports UNREGISTERED, the only way the runtime tells pageable memory from pinned memory
  (and refuses its async copies, MODE-13, MODE-14, FLD-03);
* :data:`Cap.NEVER_TIMEOUT`: a kernel launched with the TIMEOUT attribute 0 reads back 0 from
  ``aclmdlRIKernelTaskGetAttribute``; without the TS firmware feature the real runtime cuts
  "never" to the maximum and reports that (1090 s; ``davinci_kernel_task.cc:175-179``,
  ``kernel_utils.cc:286-298``);
* the API families that answer a feature-not-supported code (``contract.NOT_SUPPORTED_CODES``,
  207000 / 207019) on a tiny captured model: capture, value tasks, listing, task type, seq id,
  get/set params, disable, update, timed sync, task groups, cond, build, names, attributes,
  labels, external events (chip / firmware / driver gates, ``capture_model_utils.cc:220-239``,
  ``api_c_task.cc:59-60``).

The probes are data (:data:`.probe_checks.PROBES`, one :class:`.probe_session.Probe` per capability), each short and
self-cleaning: whatever it creates is released before the next one runs. Two kinds:

* *behaviour* probes (the five above): the capability stays only when the probe showed it;
  a probe that could not run (a prerequisite is missing or answered 207000) removes it too,
  with the reason;
* *family* probes: only a 207000 / 207019 answer removes the capability.

A probe tells "the feature is absent" (207000 / 207019, a wait that returns 0 at once, bytes
that did not move) from "the feature answers wrongly" (any other code, bytes that moved
wrong): a WRONG answer keeps the capability as declared (the specs judge it too) and fails
the gate with the probe's evidence (:attr:`.probe_session.ProbeReport.failures`), never
UNSUPPORTED. A backend may promise capabilities (``promised_capabilities``; the simulator
promises all it declares): a probe that takes a promised one away fails the gate the same way
and keeps it. After the probes, :data:`.probe_checks.MEASUREMENTS` time a model's first and
second execution (:attr:`.probe_session.ProbeReport.timings`), which sizes the generated tier.

:func:`run_probes` returns a :class:`.probe_session.ProbeReport` (effective capabilities =
declared minus failed probes, one finding per probe with a one-line reason); :func:`apply` installs the
effective capabilities on the backend, and :func:`reason` gives the finding behind an absent
capability (what UNSUPPORTED outcomes print).

The probes run in a host thread of their own (which calls aclrtSetDevice first, as every
runtime thread must), each with a deadline of :data:`PROBE_DEADLINE_S` (a measurement may
carry a longer one of its own: the execution measurement waits out a slow first execution):
a runtime whose call never returns (a timed sync that ignores its timeout, TMO-01) must not
hang the start of the run where no watchdog can end it. A probe past its deadline is HUNG; its capability and those
of the probes after it (which cannot run in that thread) stay as declared, so the specs run
and judge the hang under their own watchdog.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable

from mdlri_conformance.backends.contract import Cap

from .probe_checks import MEASUREMENTS, PROBES
from .probe_session import Finding, Measurement, Probe, ProbeReport, ProbeStop, Session, Verdict


# ---------------------------------------------------------------------------------------------
# running, applying, reading


#: how long one probe may take before it counts as HUNG (a probe takes milliseconds)
PROBE_DEADLINE_S = 10.0


def run_probes(backend: Any, probes: tuple[Probe, ...] = PROBES,
               deadline_s: float = PROBE_DEADLINE_S,
               measurements: tuple[Measurement, ...] = MEASUREMENTS) -> ProbeReport:
    """Run every probe whose capability the backend declares, then the measurements; the
    effective capabilities, the findings (those that fail the gate marked) and the timings."""
    declared = frozenset(backend.capabilities)
    promise = getattr(backend, "promised_capabilities", None)
    promised = frozenset(promise) & declared if isinstance(promise, (set, frozenset)) \
        else frozenset()
    caps = set(declared)
    report = ProbeReport(declared, declared)
    start = time.monotonic()
    worker = _ProbeThread(backend)
    hung: str | None = None
    for p in probes:
        if p.cap not in declared:
            continue
        t0 = time.monotonic()
        missing = [c.value for c in p.needs if c not in caps]
        ran = False
        if hung is not None:
            verdict, why = Verdict.HUNG, f"probe: not run: the {hung} probe hung before it"
        elif missing:
            verdict, why = Verdict.UNKNOWN, f"probe: not measurable without {', '.join(missing)}"
        else:
            session = Session(backend, caps)
            verdict, why = worker.call(lambda p=p, s=session: _run_one(p, s), deadline_s)
            ran = True
            if verdict is Verdict.HUNG:
                hung = p.name
        kept = verdict in (Verdict.PRESENT, Verdict.HUNG, Verdict.WRONG) or (
            p.family and verdict is Verdict.UNKNOWN)
        fails = verdict is Verdict.WRONG
        if not kept and ran and p.cap in promised:
            # the backend guarantees it: a probe that takes it away found a bug
            kept, fails = True, True
            why = f"{why} (a capability the backend promises)"
        if not kept:
            caps.discard(p.cap)
        report.findings.append(Finding(p.cap.value, p.name, verdict.value, why,
                                       round(time.monotonic() - t0, 4), kept, fails))
    for m in measurements:
        if hung is not None or any(c not in caps for c in m.needs):
            continue
        t0 = time.monotonic()
        session = Session(backend, caps)
        verdict, why = worker.call(lambda m=m, s=session: _run_one(m, s),
                                   m.deadline_s or deadline_s)
        report.timings.update(session.timings)
        if verdict is Verdict.HUNG:
            hung = m.name
        report.findings.append(Finding(m.key, m.name, verdict.value, why,
                                       round(time.monotonic() - t0, 4), True))
    worker.stop()
    report.effective = frozenset(caps)
    report.seconds = time.monotonic() - start
    return report


class _ProbeThread:
    """One daemon host thread that runs the probes, one at a time, each with a deadline.

    A probe stuck in the runtime leaves the thread stuck; nothing more is sent to it."""

    def __init__(self, backend: Any) -> None:
        self._jobs: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self._device = _current_device(backend)
        self._backend = backend
        self._thread: threading.Thread | None = None

    def call(self, fn: Callable[[], tuple[Verdict, str]],
             deadline_s: float) -> tuple[Verdict, str]:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="mdlri-probes", daemon=True)
            self._thread.start()
        done: queue.Queue[tuple[Verdict, str]] = queue.Queue(maxsize=1)
        self._jobs.put(lambda: done.put(fn()))
        try:
            return done.get(timeout=deadline_s)
        except queue.Empty:
            return Verdict.HUNG, (f"probe: a runtime call did not return within {deadline_s:g} s "
                                  "(kept as declared; the specs judge it)")

    def stop(self) -> None:
        self._jobs.put(None)

    def _loop(self) -> None:
        set_device = getattr(self._backend, "set_device", None)
        if callable(set_device):
            set_device(self._device)
        while (job := self._jobs.get()) is not None:
            job()


def _current_device(backend: Any) -> int:
    """The device the backend's own thread uses (``aclrtGetDevice``), else 0."""
    get_device = getattr(backend, "get_device", None)
    if callable(get_device):
        try:
            rc, device = get_device()
        except Exception:  # a backend without host state: the first device
            return 0
        if rc == 0 and isinstance(device, int):
            return device
    return 0


def _run_one(p: Probe | Measurement, s: Session) -> tuple[Verdict, str]:
    try:
        return p.run(s)
    except ProbeStop as stop:
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


def timing(backend: Any, key: str) -> float | None:
    """A figure the measurements took at start (e.g. ``first_execution_s``), else None."""
    rep = report_of(backend)
    value = rep.timings.get(key) if rep else None
    return float(value) if isinstance(value, (int, float)) else None


def has(backend: Any, cap: Cap) -> bool:
    """Whether the backend (after the probes) has ``cap``."""
    return cap in getattr(backend, "capabilities", frozenset())
