"""Capture sessions, capture modes and the CaptureEnd join check.

A :class:`CaptureSession` is one open capture: its model, origin stream, mode and capturing
thread, and the user streams that take part (the origin, plus streams that joined through a
captured event, XS-01), each mapped to its internal model stream.

Capture modes (MODE-01..14): the "unsafe" calls (sync memcpy, sync memset, and an async copy
with pageable host memory on a non-capturing stream) are checked by :func:`unsafe_blocked`:

* no open capture: nothing is blocked;
* the calling thread's exchange mode is RELAXED: allowed (MODE-06);
* the calling thread itself owns an open GLOBAL or THREAD_LOCAL capture: blocked (MODE-03,
  MODE-07);
* otherwise the context mode (the strictest open capture, MODE-11) decides: GLOBAL blocks a
  thread whose exchange mode is GLOBAL (MODE-02) but not one with THREAD_LOCAL (MODE-08);
  THREAD_LOCAL and RELAXED captures block no other thread (MODE-03, MODE-04).

The per-thread exchange mode starts at GLOBAL and is sticky (MODE-05, MODE-09).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterable

from mdlri_conformance.backends.contract import CaptureMode, TaskType

from .model import ModelStream, SimModel


@dataclass(eq=False)
class CaptureSession:
    """One open capture (CAP-05: the model exists while the capture is open)."""

    model: SimModel
    origin: Any  # SimStream
    mode: int
    thread: threading.Thread  # the Thread object, not its ident: idents are reused
    streams: dict = field(default_factory=dict)  # SimStream -> ModelStream, origin first
    invalidated: bool = False  # model-level invalidation (STAT-05, XS-07)

    def join(self, user_stream: Any) -> ModelStream:
        """Attach ``user_stream`` with a new internal stream (origin at Begin, forks later)."""
        ms = self.model.new_stream(user_stream)
        self.streams[user_stream] = ms
        user_stream.session = self
        return ms

    def release_streams(self) -> None:
        """Every joined user stream goes back to NONE (STAT-04, CAP-13, CAP-14)."""
        for us in self.streams:
            us.session = None
            us.invalidated = False

    def release_events(self) -> None:
        """The user events' capture bindings are released (XS-11)."""
        for ev in self.model.events:
            if ev.binding is self.model:
                ev.binding = None


class ThreadModes:
    """The per-thread capture exchange mode (MODE-05, MODE-09), initially GLOBAL, and the
    capture modes a thread holds beyond its open captures (only with the fault
    ``wrong-thread-end-leaks-mode``: the beginning thread of a capture ended from the wrong
    thread keeps that capture's mode, ``feature/aclgraph/context_aclgraph.cc:529-531``,
    ``core/src/common/inner_thread_local.cpp:203-215``)."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._leaked: dict[threading.Thread, list[int]] = {}

    def leak(self, owner: threading.Thread, mode: int, caller: threading.Thread) -> None:
        """A wrong-thread end releases ``mode`` on ``caller`` instead of ``owner``."""
        self._leaked.setdefault(owner, []).append(int(mode))
        held = self._leaked.get(caller, [])
        if caller is not owner and int(mode) in held:
            held.remove(int(mode))

    def leaked(self, thread: threading.Thread) -> list[int]:
        return list(self._leaked.get(thread, ()))

    def get(self) -> int:
        return getattr(self._local, "mode", int(CaptureMode.GLOBAL))

    def exchange(self, mode: int) -> int:
        prev = self.get()
        self._local.mode = int(mode)
        return prev


#: "no mode" (RT_STREAM_CAPTURE_MODE_MAX): no capture open in the context / thread
NO_MODE = 3


def unsafe_blocked(sessions: Iterable[CaptureSession], thread: threading.Thread,
                   exchange_mode: int, held: Iterable[int] = ()) -> bool:
    """True if an unsafe call from ``thread`` is refused under the open captures (MODE-*).

    The context mode is the strictest open capture (MODE-11); the thread's capture mode the
    strictest capture it began and still holds (its open captures, plus ``held`` modes leaked
    to it). Then, as ``Context::IsCaptureModeSupport`` (``context_aclgraph.cc:230-260``): no
    open capture or exchange mode RELAXED -> allowed (MODE-06); exchange GLOBAL -> refused when
    the context mode is GLOBAL (MODE-02/03) or the thread's is THREAD_LOCAL (MODE-07);
    exchange THREAD_LOCAL -> refused when the thread's mode is GLOBAL or THREAD_LOCAL (MODE-08)."""
    sessions = list(sessions)
    if not sessions:
        return False
    if exchange_mode == CaptureMode.RELAXED:
        return False  # MODE-06
    ctx_mode = min(s.mode for s in sessions)  # MODE-11
    mine = [s.mode for s in sessions if s.thread == thread] + list(held)
    thread_mode = min(mine) if mine else NO_MODE
    if exchange_mode == CaptureMode.GLOBAL:
        return ctx_mode == CaptureMode.GLOBAL or thread_mode == CaptureMode.THREAD_LOCAL
    return thread_mode in (CaptureMode.GLOBAL, CaptureMode.THREAD_LOCAL)


def joined_ok(session: CaptureSession, by_user_event: bool = False) -> bool:
    """The join requirement checked by CaptureEnd (XS-02, XS-03, XS-15).

    Every non-origin stream's last task must be an EVENT_RECORD whose event a *different*
    stream of the capture waits on afterwards, and the origin must depend (transitively,
    through record -> later wait pairs) on every non-origin stream. Events are the internal
    ones: a second record of a user event records a new one (XS-13), which a wait captured
    before it never took. ``by_user_event`` is the fault join-by-user-event: any wait on the
    same user event, before the record or after, counts.
    """
    origin_ms = session.streams[session.origin]
    all_ms = list(session.streams.values())
    subs = [ms for ms in all_ms if ms is not origin_ms]

    def waits_after(ev: Any, seq: int, exclude: ModelStream) -> bool:
        return any(t.host.type == TaskType.EVENT_WAIT and t.host.event is ev and t.seq_id > seq
                   for ms in all_ms if ms is not exclude for t in ms.tasks)

    def waited_by_handle(ev: Any, exclude: ModelStream) -> bool:
        return any(t.host.type == TaskType.EVENT_WAIT and t.host.event is not None
                   and t.host.event.user_event is ev.user_event
                   for ms in all_ms if ms is not exclude for t in ms.tasks)

    for ms in subs:
        if not ms.tasks:
            return False
        last = ms.tasks[-1]
        if last.host.type != TaskType.EVENT_RECORD:
            return False
        if by_user_event:
            if not waited_by_handle(last.host.event, ms):
                return False
        elif not waits_after(last.host.event, last.seq_id, ms):
            return False

    # depends[A] = streams B such that A waits (at seq w) on an event B recorded (at seq r < w)
    records: list[tuple[Any, int, ModelStream]] = [
        (t.host.event, t.seq_id, ms) for ms in all_ms for t in ms.tasks
        if t.host.type == TaskType.EVENT_RECORD]
    depends: dict[ModelStream, set[ModelStream]] = {ms: set() for ms in all_ms}
    for ms in all_ms:
        for t in ms.tasks:
            if t.host.type != TaskType.EVENT_WAIT:
                continue
            for ev, r_seq, src in records:
                if ev is t.host.event and r_seq < t.seq_id and src is not ms:
                    depends[ms].add(src)
    reached = {origin_ms}
    todo = [origin_ms]
    while todo:
        for dep in depends[todo.pop()]:
            if dep not in reached:
                reached.add(dep)
                todo.append(dep)
    return all(ms in reached for ms in subs)


def unrecorded_event(model: SimModel) -> bool:
    """True if an event captured into the model was never recorded inside it (XS-06)."""
    return any(not me.recorded for me in model.events.values())
