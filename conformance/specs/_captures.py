"""Closing the captures a spec of the extended API leaves open (shared by those modules).

The harness ends a capture left open at cleanup but does not destroy the model that
CaptureEnd then returns; specs that deliberately stop mid-capture (error cells, sub-model
captures) would leak one model each. The fixture below ends such captures, the most recently
created stream first (a sub-model capture before its parent, COND-09), and destroys the
returned model unless the spec already tracks it.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from backends.contract import CaptureStatus, Err
from conformance.harness import Dev


def close_open_captures(dev: Dev) -> None:
    for s in reversed(dev._streams):
        rc, status, _ = dev.b.capture_get_info(s)
        if rc != Err.SUCCESS or status == CaptureStatus.NONE:
            continue
        rc, m = dev.b.capture_end(s)
        if rc == Err.SUCCESS and m and not any(m is t for t in dev._models):
            dev.b.synchronize_stream_with_timeout(s, 2000)
            dev.b.destroy(m)  # a sub-model answers 207000 here and goes with its parent


@pytest.fixture(autouse=True)
def _close_captures(dev: Dev) -> Iterator[None]:
    """Autouse in the extended-API spec modules (imported there)."""
    yield
    close_open_captures(dev)
