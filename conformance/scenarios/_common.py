"""Shared plumbing of the end-to-end scenarios: the example's log lines, CHECK_ERROR, cleanup.

Every CANN example logs through ``INFO_LOG`` / ``ERROR_LOG`` (``[INFO]  `` / ``[ERROR]  ``
with two spaces, scenarios.md §1) and stops at the first failing call (``CHECK_ERROR``).
:class:`Runner` mirrors that: :meth:`Runner.check` raises :class:`ScenarioError` with the
example's ``Operation failed: <call> returned error code <n>`` text, and cleanup steps
registered with :meth:`Runner.defer` run in reverse order whatever happened.
:func:`run_steps` is that control flow, written once; :func:`run_scenario` adds the result
and the sample's opening and closing lines, and :class:`Example` is what a scenario module
declares for ``mdlri-conformance example NAME``.

A step that answers 207000 / 207019 (``contract.NOT_SUPPORTED_CODES``: a chip, driver or
firmware gate) raises :class:`ScenarioUnsupported` (:func:`not_supported`); a run function
decorated with :func:`reports_unsupported` then raises
:class:`conformance.framework.outcomes.Unsupported` after its own cleanup, so the spec is
UNSUPPORTED, never FAIL.
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass
from typing import Any, Callable, Protocol, TypeVar

import numpy as np

from mdlri_conformance.backends.contract import NOT_SUPPORTED_CODES, Backend, Err, MemcpyKind, err_name

from ..framework import outcomes

F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R", bound="Result")


class ScenarioError(Exception):
    """A step of a scenario failed; the message is the example's error line."""


class ScenarioUnsupported(ScenarioError):
    """A step answered 207000 / 207019: the scenario cannot run on this runtime."""


class ScenarioReported(ScenarioError):
    """A step failed and already printed the example's own line for it (no error line more)."""


class Result(Protocol):
    """What every scenario result holds: the printed lines and whether the run succeeded."""

    lines: list[str]
    ok: bool


#: the not-supported answers met by the scenario run in progress (see reports_unsupported)
_met: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "scenario_unsupported", default=None)


def not_supported(rc: Any, call: str) -> None:
    """Raise :class:`ScenarioUnsupported` (the example's error line) for a 207000 / 207019."""
    if rc in NOT_SUPPORTED_CODES:
        msg = f"Operation failed: {call} returned error code {err_name(rc)}"
        met = _met.get()
        if met is not None:
            met.append(msg)
        raise ScenarioUnsupported(msg)


def reports_unsupported(run: F) -> F:
    """Decorate a scenario's run function: when one of its steps answered 207000 / 207019
    and the run did not succeed, raise :class:`outcomes.Unsupported` (after the run's own
    cleanup and log lines) instead of returning the failed result."""

    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        met: list[str] = []
        token = _met.set(met)
        try:
            res = run(*args, **kwargs)
        finally:
            _met.reset(token)
        if met and not getattr(res, "ok", False):
            raise outcomes.Unsupported(f"scenario step: {met[0]}")
        return res
    return wrapper  # type: ignore[return-value]


def print_array(values: np.ndarray) -> str:
    """``ModelUtils::PrintArray``: ``The vector data is: `` then ``%.4f`` + two spaces each."""
    return "The vector data is: " + "".join(f"{float(v):.4f}  " for v in values)


class Runner:
    """One scenario run on one backend: log lines, checked calls and deferred cleanup."""

    def __init__(self, b: Backend, emit: Callable[[str], None], lines: list[str]) -> None:
        self.b = b
        self.lines = lines
        self._emit = emit
        self._cleanup: list[tuple[str, Callable[[], int]]] = []
        self._open: list[tuple[object, Callable[[], Any]]] = []

    # -- logging ---------------------------------------------------------------------------
    def info(self, msg: str) -> None:
        """``INFO_LOG``."""
        self._log(f"[INFO]  {msg}")

    def error(self, msg: str) -> None:
        """``ERROR_LOG``."""
        self._log(f"[ERROR]  {msg}")

    def _log(self, line: str) -> None:
        self.lines.append(line)
        self._emit(line)

    # -- checked calls ---------------------------------------------------------------------
    def check(self, rc: int, call: str) -> None:
        """``CHECK_ERROR``: a non-zero rc ends the scenario with the example's message
        (:class:`ScenarioUnsupported` for 207000 / 207019)."""
        not_supported(rc, call)
        if rc != Err.SUCCESS:
            raise ScenarioError(f"Operation failed: {call} returned error code {err_name(rc)}")

    def defer(self, what: str, fn: Callable[[], int]) -> None:
        """Register a cleanup step (run in reverse order by :meth:`cleanup`)."""
        self._cleanup.append((what, fn))

    def opened(self, close: Callable[[], Any]) -> object:
        """Register ``close`` for something the steps opened (a capture): a run that stops
        before :meth:`closed` calls it, unchecked, before the cleanup steps. Returns the
        token :meth:`closed` takes."""
        token = object()
        self._open.append((token, close))
        return token

    def closed(self, token: object) -> None:
        """The steps closed what :meth:`opened` registered (``token``)."""
        self._open = [(t, close) for t, close in self._open if t is not token]

    def close_open(self) -> None:
        """Call what is still open, newest first (a capture ends before its stream goes)."""
        for _token, close in reversed(self._open):
            close()
        self._open.clear()

    def cleanup(self) -> bool:
        """Run the cleanup steps, newest first; False when one of them failed."""
        ok = True
        for what, fn in reversed(self._cleanup):
            rc = fn()
            if rc != Err.SUCCESS:
                self.error(f"Cleanup failed: {what} returned error code {rc}")
                ok = False
        self._cleanup.clear()
        return ok

    # -- resources -------------------------------------------------------------------------
    def stream(self) -> Any:
        """aclrtCreateStream, destroyed at cleanup."""
        rc, s = self.b.create_stream()
        self.check(rc, "aclrtCreateStream")
        self.defer("aclrtDestroyStream", lambda: self.b.destroy_stream(s))
        return s

    def event(self, flag: int) -> Any:
        """aclrtCreateEventExWithFlag(flag), destroyed at cleanup."""
        rc, e = self.b.create_event_ex_with_flag(flag)
        self.check(rc, "aclrtCreateEventExWithFlag")
        self.defer("aclrtDestroyEvent", lambda: self.b.destroy_event(e))
        return e

    def malloc(self, nbytes: int) -> int:
        """aclrtMalloc (HUGE_FIRST), freed at cleanup."""
        rc, addr = self.b.malloc(nbytes)
        self.check(rc, "aclrtMalloc")
        self.defer("aclrtFree", lambda: self.b.free(addr))
        return addr

    def malloc_host(self, nbytes: int) -> np.ndarray:
        """aclrtMallocHost (pinned), freed at cleanup."""
        rc, host = self.b.malloc_host(nbytes)
        self.check(rc, "aclrtMallocHost")
        self.defer("aclrtFreeHost", lambda: self.b.free_host(host))
        return host

    def load_functions(self, *names: str) -> dict[str, Any]:
        """Load the catalog kernel binary and look up ``names``; unloaded at cleanup."""
        rc, binh = self.b.binary_load_from_file(self.b.kernel_binary_path(), None)
        self.check(rc, "aclrtBinaryLoadFromFile")
        self.defer("aclrtBinaryUnLoad", lambda: self.b.binary_unload(binh))
        funcs: dict[str, Any] = {}
        for name in names:
            rc, fn = self.b.binary_get_function(binh, name)
            self.check(rc, "aclrtBinaryGetFunction")
            funcs[name] = fn
        return funcs

    def h2d(self, dst: int, values: np.ndarray) -> None:
        """Synchronous aclrtMemcpy host -> device of ``values``' bytes."""
        arr = np.ascontiguousarray(values)
        self.check(self.b.memcpy(dst, arr.nbytes, arr, arr.nbytes, MemcpyKind.HOST_TO_DEVICE),
                   "aclrtMemcpy")

    def d2h(self, src: int, like: np.ndarray) -> np.ndarray:
        """Synchronous aclrtMemcpy device -> host into a new array shaped like ``like``."""
        out = np.zeros_like(np.ascontiguousarray(like))
        self.check(self.b.memcpy(out, out.nbytes, src, out.nbytes, MemcpyKind.DEVICE_TO_HOST),
                   "aclrtMemcpy")
        return out

    def tasks(self, model: Any) -> list[tuple[Any, list[Any]]]:
        """Every model stream with its tasks in list order (two-call protocol for both)."""
        rc, _, n = self.b.get_streams(model, None)
        self.check(rc, "aclmdlRIGetStreams")
        rc, streams, n = self.b.get_streams(model, n)
        self.check(rc, "aclmdlRIGetStreams")
        out: list[tuple[Any, list[Any]]] = []
        for s in streams[:n]:
            rc, _, t = self.b.get_tasks_by_stream(s, None)
            self.check(rc, "aclmdlRIGetTasksByStream")
            tasks: list[Any] = []
            if t:
                rc, slots, t = self.b.get_tasks_by_stream(s, t)
                self.check(rc, "aclmdlRIGetTasksByStream")
                tasks = list(slots[:t])
            out.append((s, tasks))
        return out


def run_steps(r: Runner, steps: Callable[[], None]) -> bool:
    """``CHECK_ERROR``'s control flow, once for every scenario: run ``steps``; a
    :class:`ScenarioError` stops them and prints its error line (a :class:`ScenarioReported`
    printed its own); whatever happened, close what the steps left open, then run the cleanup
    steps. True when the steps finished and every cleanup step succeeded."""
    ok = False
    try:
        steps()
        ok = True
    except ScenarioReported:
        pass
    except ScenarioError as exc:
        r.error(str(exc))
    finally:
        r.close_open()
        if not r.cleanup():
            ok = False
    return ok


def run_scenario(res: R, b: Backend, emit: Callable[[str], None],
                 steps: Callable[[Runner], None], *, sample: str | None = None) -> R:
    """Run ``steps`` on ``b`` (:func:`run_steps`) into ``res``: its lines and ``ok``.

    With ``sample``, the run opens with ``Start to run <sample> sample.`` and closes with
    ``Run the <sample> sample successfully.`` or ``... failed.``, as the examples that print
    them do."""
    r = Runner(b, emit, res.lines)
    if sample is not None:
        r.info(f"Start to run {sample} sample.")
    res.ok = run_steps(r, lambda: steps(r))
    if sample is not None:
        if res.ok:
            r.info(f"Run the {sample} sample successfully.")
        else:
            r.error(f"Run the {sample} sample failed.")
    return res


@dataclass(frozen=True)
class Example:
    """A scenario as ``mdlri-conformance example NAME`` runs it: its run function, called
    with (backend, emit), and the names it answers to (the short name, then the CANN sample's
    directory name)."""

    run: Callable[..., Result]
    names: tuple[str, ...]

    def succeeds(self, backend: Backend, emit: Callable[[str], None]) -> bool:
        """Run the scenario; whether it succeeded."""
        return self.run(backend, emit).ok
