"""Runtime calls with a host deadline: a call that may never return (a sync that ignores its
timeout, TMO-01; a stream query that waits for the stream, TMO-06) runs on a host thread of
its own, and the replay goes on when the deadline passes, recording that it did not return.

The thread first makes the caller's device current (aclrtSetDevice: every thread that
calls the runtime must), like the capability probes' thread
(:mod:`conformance.framework.probe`). A call stuck past its deadline keeps its daemon
thread; the replay releases what blocks it during cleanup, so the thread ends then.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

#: the value an observation takes when the call did not return in time
DID_NOT_RETURN = "did not return"


@dataclass
class Outcome:
    """What a bounded call gave: ``returned`` False when the deadline passed first;
    ``elapsed_ms`` is the time the call itself took (or had taken at the deadline)."""

    returned: bool
    value: Any = None
    elapsed_ms: float = 0.0


def current_device(backend: Any) -> int | None:
    """The device current on this thread (aclrtGetDevice), or None when the backend has no
    such call or it fails."""
    get_device = getattr(backend, "get_device", None)
    if not callable(get_device):
        return None
    try:
        rc, device = get_device()
    except Exception:  # a backend without host state
        return None
    return device if rc == 0 and isinstance(device, int) else None


def call_within(backend: Any, fn: Callable[[], Any], deadline_s: float) -> Outcome:
    """Run ``fn`` on a new host thread (device made current first) and wait at most
    ``deadline_s``; an exception of ``fn`` is re-raised here."""
    device = current_device(backend)
    box: dict[str, Any] = {}
    started = threading.Event()

    def body() -> None:
        try:
            if device is not None:
                backend.set_device(device)
            box["t0"] = time.monotonic()
            started.set()
            box["value"] = fn()
            box["t1"] = time.monotonic()
        except BaseException as exc:  # re-raised in the caller's thread
            box["exc"] = exc
        finally:
            started.set()

    t = threading.Thread(target=body, name="mdlri-bounded-call", daemon=True)
    t.start()
    started.wait(deadline_s)
    t.join(deadline_s)
    if "exc" in box:
        raise box["exc"]
    t0 = box.get("t0", time.monotonic())
    if t.is_alive():
        return Outcome(False, DID_NOT_RETURN, (time.monotonic() - t0) * 1000.0)
    return Outcome(True, box.get("value"), (box.get("t1", t0) - t0) * 1000.0)
