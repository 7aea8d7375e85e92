"""Shared fixtures of the project's tests."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

import mdlri_conformance.backends.sim as sim

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def sim_backend() -> Iterator[Any]:
    """One simulator for a test module's replays."""
    b = sim.create()
    yield b
    b.close()
