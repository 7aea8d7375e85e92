"""Process-global runtime state, read before the first spec and after each one.

DESIGN.md ("Verdicts a release engineer can trust"): specs leave no process-global runtime
state behind, so the suite passes in any order. A runtime keeps such state per thread and
per context; a spec that changes it and cannot restore it makes *later* specs pass or fail
depending on the order they run in. This module reads that state through the contract only
(:mod:`backends.contract`), so :mod:`conformance.isolation` can compare a spec's reading with
the one before it and report what changed, the way :mod:`conformance.leaks` reports leaks:
in the spec's ``results.jsonl`` row as ``"state"`` and as a count in the summary; reported,
not gated.

Aspects (each value is a small JSON value; equal values mean "unchanged"):

``thread_capture_mode`` (MODE-03, MODE-07, MODE-08) - the calling thread's own capture mode,
    which only behaviour shows. The real runtime (hicann/runtime @681ef76) keeps it as a
    per-thread reference count per mode, entered at CaptureBegin
    (``src/runtime/core/src/common/inner_thread_local.cpp:193-201``) and released in
    ``Context::CaptureModeExit``
    (``src/runtime/feature/aclgraph/context_aclgraph.cc:742-776``) *on the thread that
    calls CaptureEnd*. A CaptureEnd from the wrong thread is refused with 107038 but still
    runs ``CaptureModeExit`` there
    (``src/runtime/feature/aclgraph/context_aclgraph.cc:529-531``), so
    ``ThreadCaptureModeExit`` (``src/runtime/core/src/common/inner_thread_local.cpp:203-215``)
    decrements the wrong thread's count and the beginning thread keeps GLOBAL (or
    THREAD_LOCAL) as its thread mode for the rest of the process. The observable is
    ``Context::IsCaptureModeSupport``
    (``src/runtime/feature/aclgraph/context_aclgraph.cc:244-248`` and ``:251-256``): with
    exchange mode THREAD_LOCAL an unsafe call is refused iff the thread mode is GLOBAL or
    THREAD_LOCAL. The check therefore sets the exchange mode to THREAD_LOCAL, begins a
    RELAXED capture on a scratch stream in the calling thread (the context then has a capture
    and the clean thread mode is RELAXED, MODE-04), makes an 8-byte synchronous
    ``aclrtMemcpy`` (unsafe, MODE-01) and expects 0; a leaked GLOBAL or THREAD_LOCAL thread
    mode gives 107030 (MODE-13). (A THREAD_LOCAL capture with exchange mode GLOBAL, the
    other obvious probe, shows a leaked GLOBAL - 0 instead of 107030, findings row 3 - but
    not a leaked THREAD_LOCAL; this one shows both with one capture.) Value: ``"clear"``, or
    ``"restricted: <rc>"``.
``context_capture_mode`` (MODE-02, MODE-11) - with no capture of the check's own and the
    exchange mode GLOBAL, the same copy must succeed; a GLOBAL capture still open anywhere in
    the context, or a context reference count that was never released
    (``Context::captureModeRefNum_``,
    ``src/runtime/feature/aclgraph/context_aclgraph.cc:729-776``), gives 107030.
    Value as above.
``exchange_mode`` (MODE-05, MODE-09) - the calling thread's exchange mode, read by setting
    it (``aclmdlRICaptureThreadExchangeMode`` returns the previous one) and restoring it.
    Value: the mode's name; the documented initial value is GLOBAL.
``device``, ``context`` - ``aclrtGetDevice`` / ``aclrtGetCurrentContext`` of the calling
    thread, through the optional :class:`~backends.contract.HostStateBackend` methods; a
    backend without them leaves these aspects "not checked". Values: the device id, a token
    of the context handle, or ``"rc N"``.
``open_captures`` - captures the backend still counts as open
    (``live_counts().extra["open_captures"]``, the simulator); the spec's own streams are
    closed by the harness (:meth:`conformance.harness.Dev.close`) before this is read.

An aspect that cannot be read on a backend (no method, no capability, a 207000, a failed
setup call) is listed with its reason under ``not_checked`` instead: "not checked" is never
reported as "unchanged". The check makes its own scratch stream, allocation and model and
releases them, so the resource leak counts are unaffected.

:func:`restore` puts back what can be put back (the exchange mode, the device) so one
spec's change does not become every later spec's problem; a leaked thread capture mode
cannot be released through the API, which is why specs that cause one run in a process of
their own (marker ``own_process``, :mod:`conformance.isolation`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mdlri_conformance.backends.contract import (
    NOT_SUPPORTED_CODES, UNWRITTEN, Cap, CaptureMode, Err, MemcpyKind, err_name,
)

#: every aspect the check reads, in report order
ASPECTS = ("thread_capture_mode", "context_capture_mode", "exchange_mode", "device", "context",
           "open_captures")
CLEAR = "clear"
#: bytes the probe copies host-to-device
_PROBE_BYTES = 8


@dataclass
class Reading:
    """One reading of the process-global state, from the calling thread."""

    values: dict[str, Any] = field(default_factory=dict)
    #: aspect -> why it was not read on this backend
    not_checked: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"values": dict(self.values)}
        if self.not_checked:
            out["not_checked"] = dict(self.not_checked)
        return out


def _mode_name(mode: Any) -> Any:
    try:
        return CaptureMode(int(mode)).name
    except (TypeError, ValueError):
        return mode if isinstance(mode, (int, str)) else repr(mode)


def _token(handle: Any) -> Any:
    """A JSON value equal for equal handles: NULL, the pointer of a C handle, or the object's
    identity (a simulator handle is one Python object for as long as it lives)."""
    if handle is None:
        return "NULL"
    if handle is UNWRITTEN:
        return "unwritten"
    ptr = getattr(handle, "ptr", handle)
    if isinstance(ptr, (int, np.integer)) and not isinstance(ptr, bool):
        return f"{int(ptr):#x}"
    return f"{type(handle).__name__}@{id(handle):#x}"


def _rc_text(rc: Any) -> str:
    return f"rc {err_name(rc)}" if isinstance(rc, int) else f"answer {rc!r}"


def _unsupported(rc: Any) -> bool:
    return isinstance(rc, int) and int(rc) in NOT_SUPPORTED_CODES


class _Probe:
    """The scratch resources of one reading (released in :meth:`close`)."""

    def __init__(self, backend: Any) -> None:
        self.b = backend
        self.stream: Any = None
        self.addr: Any = None
        self.host = np.zeros(_PROBE_BYTES, dtype=np.uint8)
        self.problem = ""

    def open(self) -> bool:
        rc, s = self.b.create_stream()
        if rc != Err.SUCCESS:
            self.problem = f"aclrtCreateStream (scratch) {_rc_text(rc)}"
            return False
        self.stream = s
        rc, addr = self.b.malloc(64)
        if rc != Err.SUCCESS:
            self.problem = f"aclrtMalloc (scratch) {_rc_text(rc)}"
            return False
        self.addr = addr
        return True

    def unsafe_copy(self) -> int:
        """The synchronous 8-byte H2D aclrtMemcpy (an unsafe call, MODE-01)."""
        return int(self.b.memcpy(self.addr, _PROBE_BYTES, self.host, _PROBE_BYTES,
                                 MemcpyKind.HOST_TO_DEVICE))

    def under_relaxed_capture(self) -> tuple[Any, str]:
        """The unsafe copy's rc inside a RELAXED capture of the scratch stream begun by this
        thread; (None, why) when the capture could not be made."""
        rc = self.b.capture_begin(self.stream, CaptureMode.RELAXED)
        if rc != Err.SUCCESS:
            return None, f"aclmdlRICaptureBegin(RELAXED) (scratch) {_rc_text(rc)}"
        try:
            return self.unsafe_copy(), ""
        finally:
            rc_end, model = self.b.capture_end(self.stream)
            if rc_end == Err.SUCCESS and model not in (None, UNWRITTEN):
                self.b.destroy(model)

    def close(self) -> None:
        if self.addr is not None:
            self.b.free(self.addr)
        if self.stream is not None:
            self.b.destroy_stream(self.stream)


def _exchange(backend: Any, mode: Any) -> tuple[int, Any]:
    rc, prev = backend.capture_thread_exchange_mode(mode)
    return int(rc), prev


def _read_modes(backend: Any, reading: Reading) -> None:
    """thread_capture_mode, context_capture_mode and exchange_mode (see the module doc)."""
    caps = getattr(backend, "capabilities", frozenset())
    if Cap.CAPTURE not in caps or Cap.CAPTURE_MODES not in caps:
        why = "the backend declares no capture modes (Cap.CAPTURE_MODES)"
        for a in ("thread_capture_mode", "context_capture_mode", "exchange_mode"):
            reading.not_checked[a] = why
        return
    rc, prev = _exchange(backend, CaptureMode.THREAD_LOCAL)
    if rc != Err.SUCCESS:
        why = f"aclmdlRICaptureThreadExchangeMode {_rc_text(rc)}"
        for a in ("thread_capture_mode", "context_capture_mode", "exchange_mode"):
            reading.not_checked[a] = why
        return
    reading.values["exchange_mode"] = _mode_name(prev)
    probe = _Probe(backend)
    try:
        if not probe.open():
            reading.not_checked["thread_capture_mode"] = probe.problem
            reading.not_checked["context_capture_mode"] = probe.problem
            return
        copy_rc, why = probe.under_relaxed_capture()
        if copy_rc is None:
            reading.not_checked["thread_capture_mode"] = why
        elif _unsupported(copy_rc):
            reading.not_checked["thread_capture_mode"] = f"aclrtMemcpy {_rc_text(copy_rc)}"
        else:
            reading.values["thread_capture_mode"] = (
                CLEAR if copy_rc == Err.SUCCESS else f"restricted: {err_name(copy_rc)}")
        _exchange(backend, CaptureMode.GLOBAL)
        copy_rc = probe.unsafe_copy()
        if _unsupported(copy_rc):
            reading.not_checked["context_capture_mode"] = f"aclrtMemcpy {_rc_text(copy_rc)}"
        else:
            reading.values["context_capture_mode"] = (
                CLEAR if copy_rc == Err.SUCCESS else f"restricted: {err_name(copy_rc)}")
    finally:
        probe.close()
        _exchange(backend, prev)  # what the spec left; restore() decides about repairs


def _has_method(backend: Any, name: str) -> bool:
    """A real method or attribute, not one answered by a catch-all ``__getattr__``."""
    return callable(getattr(type(backend), name, None)) or callable(
        getattr(backend, "__dict__", {}).get(name))


def _read_host_state(backend: Any, reading: Reading) -> None:
    """device and context (HostStateBackend, optional)."""
    for aspect, method, api in (("device", "get_device", "aclrtGetDevice"),
                                ("context", "get_current_context", "aclrtGetCurrentContext")):
        if not _has_method(backend, method):
            reading.not_checked[aspect] = f"the backend has no {method} ({api}, HostStateBackend)"
            continue
        try:
            rc, value = getattr(backend, method)()
        except Exception as exc:
            reading.not_checked[aspect] = f"{method} raised {type(exc).__name__}: {exc}"[:200]
            continue
        if _unsupported(rc):
            reading.not_checked[aspect] = f"{api} {_rc_text(rc)}"
        elif rc != Err.SUCCESS:
            reading.values[aspect] = _rc_text(int(rc))
        elif aspect == "device":
            reading.values[aspect] = int(value) if isinstance(value, (int, np.integer)) \
                else _token(value)
        else:
            reading.values[aspect] = _token(value)


def _read_open_captures(backend: Any, reading: Reading) -> None:
    fn = getattr(backend, "live_counts", None)
    extra = getattr(fn(), "extra", None) if callable(fn) else None
    if isinstance(extra, dict) and "open_captures" in extra:
        reading.values["open_captures"] = int(extra["open_captures"])
    else:
        reading.not_checked["open_captures"] = (
            "the backend counts no open captures (live_counts().extra['open_captures']); an "
            "open GLOBAL capture still shows in context_capture_mode")


_PARTS = ((_read_modes, ("thread_capture_mode", "context_capture_mode", "exchange_mode")),
          (_read_host_state, ("device", "context")),
          (_read_open_captures, ("open_captures",)))


def read(backend: Any) -> Reading:
    """Read every aspect from the calling thread. Never raises: an aspect whose reading
    failed is "not checked" with the reason."""
    reading = Reading()
    for part, aspects in _PARTS:
        try:
            part(backend, reading)
        except Exception as exc:  # a broken or foreign backend: say so, go on
            why = f"the check raised {type(exc).__name__}: {exc}"[:200]
            for a in aspects:
                if a not in reading.values:
                    reading.not_checked.setdefault(a, why)
    return reading


def changes(before: Reading | None, after: Reading) -> dict[str, dict[str, Any]]:
    """Aspects read both times whose value differs: ``{aspect: {"before": x, "after": y}}``."""
    if before is None:
        return {}
    return {a: {"before": before.values[a], "after": after.values[a]}
            for a in ASPECTS
            if a in before.values and a in after.values and before.values[a] != after.values[a]}


def restore(backend: Any, baseline: Reading, after: Reading) -> list[str]:
    """Put back the exchange mode and the device of the baseline where ``after`` differs;
    ``after`` is updated to what was put back. Returns the aspects restored."""
    done: list[str] = []
    want = baseline.values.get("exchange_mode")
    if isinstance(want, str) and want in CaptureMode.__members__ \
            and after.values.get("exchange_mode", want) != want:
        try:
            rc, _ = _exchange(backend, CaptureMode[want])
        except Exception:
            rc = -1
        if rc == Err.SUCCESS:
            after.values["exchange_mode"] = want
            done.append("exchange_mode")
    dev = baseline.values.get("device")
    if isinstance(dev, int) and after.values.get("device", dev) != dev:
        try:
            rc = int(backend.set_device(dev))
        except Exception:
            rc = -1
        if rc == Err.SUCCESS:
            again = Reading()
            _read_host_state(backend, again)
            after.values.update({k: v for k, v in again.values.items()
                                 if k in ("device", "context")})
            done.append("device")
    return done


def describe(changed: dict[str, dict[str, Any]]) -> str:
    """``"exchange_mode GLOBAL -> RELAXED; device 0 -> 1"``."""
    return "; ".join(f"{a} {c['before']} -> {c['after']}" for a, c in changed.items())


__all__ = ["ASPECTS", "CLEAR", "Reading", "changes", "describe", "read", "restore"]
