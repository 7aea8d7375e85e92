"""The per-spec watchdog: a spec still running after ``--spec-timeout`` seconds is
interrupted with :class:`SpecTimeout` (TIMEOUT); one still running as long again, stuck in
native code, ends its process (:meth:`Watchdog` calls ``hard``), whose controller or parent
reports the spec as TIMEOUT and goes on."""

from __future__ import annotations

import argparse
import ctypes
import math
import threading
import time
from typing import Callable

import pytest

from .verdicts import verdict

#: exit status of an xdist worker or an own-process child ended by the hard watchdog (its
#: controller or parent maps it to the spec's TIMEOUT row; never the exit status of a run)
TIMEOUT_EXIT = 86
#: exit status of a ``-n 0`` run ended by the hard watchdog: FAIL (its TIMEOUT row fails the
#: gate, which wins over the run being incomplete)
STOPPED_EXIT = verdict.EXIT_CODES[verdict.FAIL]
DEFAULT_SPEC_TIMEOUT = 60.0


class SpecTimeout(BaseException):
    """Raised in a spec's thread by the watchdog (a BaseException, so neither the spec nor
    Hypothesis swallows it)."""


def spec_timeout_value(text: str) -> float:
    """``--spec-timeout``: 0 (the watchdog off) or a finite number of seconds >= 1.

    Anything else (negative, nan, inf, below one second, not a number) raises
    :class:`argparse.ArgumentTypeError` with one line naming the value; a timeout below a
    second would end specs that are merely starting, and nan/inf would kill the watchdog."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        value = math.nan
    if value == 0:
        return 0.0
    if not math.isfinite(value) or value < 1:
        raise argparse.ArgumentTypeError(
            f"--spec-timeout {text}: use 0 (off) or a finite number of seconds >= 1")
    return value


def spec_timeout_option(text: str) -> float:
    """The pytest option's type: a bad value is a usage error of one line (an
    ``ArgumentTypeError`` there would print pytest's whole usage block)."""
    try:
        return spec_timeout_value(text)
    except argparse.ArgumentTypeError as exc:
        raise pytest.UsageError(str(exc)) from None


class Watchdog:
    """One daemon thread per process; at most one armed spec at a time.

    On expiry it interrupts the spec's thread with :class:`SpecTimeout` (only while the spec
    is inside setup/call/teardown); if the spec is still armed ``timeout`` seconds after
    that, it calls ``hard(nodeid)``, which must not return.
    """

    def __init__(self, timeout: float, hard: Callable[[str], None]) -> None:
        self.timeout = timeout
        self._hard = hard
        self._cond = threading.Condition()
        self._nodeid: str | None = None
        self._thread_id = 0
        self._deadline = 0.0
        self._inside = False
        self._soft_sent = False
        self.fired: str | None = None  # nodeid interrupted last
        self._thread = threading.Thread(target=self._loop, name="mdlri-watchdog", daemon=True)
        self._thread.start()

    def arm(self, nodeid: str) -> None:
        with self._cond:
            self._nodeid, self._thread_id = nodeid, threading.get_ident()
            self._deadline = time.monotonic() + self.timeout
            self._soft_sent = False
            self._cond.notify_all()

    def disarm(self) -> None:
        with self._cond:
            self._nodeid = None
            self._cond.notify_all()

    def inside(self, flag: bool) -> None:
        """Mark the armed spec as inside (True) or between (False) its phases."""
        with self._cond:
            self._inside = flag
            self._cond.notify_all()

    def _loop(self) -> None:
        with self._cond:
            while True:
                if self._nodeid is None:
                    self._cond.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                if not self._soft_sent and self._inside:
                    self._soft_sent = True
                    self.fired = self._nodeid
                    self._deadline = time.monotonic() + self.timeout
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(
                        ctypes.c_ulong(self._thread_id), ctypes.py_object(SpecTimeout))
                elif self._soft_sent or self._inside:
                    self._hard(self._nodeid)  # does not return
                else:
                    self._cond.wait(0.05)  # between phases: deliver when the next one starts
