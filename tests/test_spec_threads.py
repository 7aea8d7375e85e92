"""Threads the specs start: a thread that outlives its spec (a run interrupted while the spec
waited) must leave nothing unhandled, or the run's output gets a thread traceback."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from mdlri_conformance.backends.contract import Err
from mdlri_conformance.backends.sim import create
from mdlri_conformance.conformance.harness import Dev, release_later


@pytest.fixture
def hooked(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The exceptions that reached threading.excepthook."""
    seen: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", seen.append)
    return seen


def test_release_later_stores_and_reports_its_rc(hooked: list[Any]) -> None:
    dev = Dev(create())
    try:
        word = dev.buffer64(0)
        timer, released = release_later(dev, word, 0.0)
        timer.start()
        timer.join()
        assert released["rc"] == Err.SUCCESS
        assert dev.read64(word) == 1
        assert released["at"] > 0
    finally:
        dev.close()
    assert hooked == []


def test_release_later_after_the_device_closed_raises_nothing(hooked: list[Any]) -> None:
    dev = Dev(create())
    word = dev.buffer64(0)
    timer, released = release_later(dev, word, 0.0)
    dev.close()  # what an interrupted spec's teardown does before the timer fires
    timer.start()
    timer.join()
    assert released["rc"] != Err.SUCCESS
    assert hooked == []
