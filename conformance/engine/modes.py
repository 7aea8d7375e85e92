"""The capture-mode model: which threads an "unsafe" call is blocked in (MODE-02 .. MODE-11).

Plain data, independent of any backend. The state is the set of active captures (origin stream
-> capture mode and the thread that began it) and each thread's exchange mode (MODE-05, GLOBAL
until the thread first exchanges it). The rule is the one the catalog cites from
``Context::IsCaptureModeSupport``:

* no active capture: nothing is blocked;
* exchange mode RELAXED: nothing is blocked in that thread (MODE-06);
* exchange mode GLOBAL: blocked while the context mode (the strictest active capture, MODE-11)
  is GLOBAL (MODE-02) or the thread's own mode is THREAD_LOCAL (MODE-03);
* exchange mode THREAD_LOCAL: blocked while the thread itself began a GLOBAL or THREAD_LOCAL
  capture that is still active (MODE-07, MODE-08).

A thread's own mode is the strictest of the captures it began that are still active; a capture
ended from any thread (including a wrong-thread end that took the stream out of capture,
CAP-14) no longer counts for the thread that began it (MODE-03).
"""

from __future__ import annotations

from dataclasses import dataclass, field

GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2


@dataclass
class CaptureModes:
    """Active captures and exchange modes; :meth:`blocked` says whether an unsafe call made
    in a thread returns 107030."""

    #: origin stream -> (capture mode, beginning thread)
    active: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: thread -> exchange mode (absent: GLOBAL)
    exchange_modes: dict[int, int] = field(default_factory=dict)

    def begin(self, stream: int, mode: int, thread: int) -> None:
        """CaptureBegin(stream, mode) in ``thread`` succeeded."""
        self.active[stream] = (mode, thread)

    def end(self, stream: int) -> None:
        """The capture of ``stream`` is over (ended, failed at end, or left capture)."""
        self.active.pop(stream, None)

    def exchange(self, thread: int, mode: int) -> int:
        """ThreadExchangeMode(mode) in ``thread``: the previous exchange mode (MODE-05)."""
        prev = self.exchange_modes.get(thread, GLOBAL)
        self.exchange_modes[thread] = mode
        return prev

    def context_mode(self) -> int | None:
        """The strictest active capture's mode (MODE-11); None when nothing captures."""
        return min((m for m, _ in self.active.values()), default=None)

    def thread_mode(self, thread: int) -> int | None:
        """The strictest mode among the active captures ``thread`` began."""
        return min((m for m, t in self.active.values() if t == thread), default=None)

    def blocked(self, thread: int) -> bool:
        """Whether an unsafe call (aclrtMemset, aclrtMemcpy, MODE-01) in ``thread`` is
        refused with 107030."""
        context = self.context_mode()
        if context is None:
            return False
        exchange = self.exchange_modes.get(thread, GLOBAL)
        own = self.thread_mode(thread)
        if exchange == RELAXED:
            return False
        if exchange == GLOBAL:
            return context == GLOBAL or own == THREAD_LOCAL
        return own in (GLOBAL, THREAD_LOCAL)
