"""Fixtures of the spec modules that belong to the content (the framework's plugin knows
nothing of the harness): ``dev``, a :class:`~mdlri_conformance.conformance.harness.Dev` over
the backend under test."""

from __future__ import annotations

from typing import Any, Iterator

import pytest

from mdlri_conformance.conformance.harness import Dev


@pytest.fixture
def dev(backend: Any) -> Iterator[Dev]:
    """A :class:`Dev` over the backend; everything it made is released after the spec."""
    d = Dev(backend)
    yield d
    d.close()
