"""The simulator's integer predicate (backends/sim/api/checks.py): the types it remembers give
the answer of the rule itself (int or numpy integer, not bool), the first time and after."""

from __future__ import annotations

import enum
from typing import Any

import numpy as np
import pytest

from mdlri_conformance.backends.contract import MemcpyKind
from mdlri_conformance.backends.sim.api.checks import is_int


class Small(enum.IntEnum):
    ONE = 1


class Liar:
    """Claims to be an int through ``__class__`` (isinstance believes it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return int


VALUES: list[Any] = [0, -3, 2**70, True, False, np.bool_(True), np.int32(4), np.uint64(5),
                     np.int8(-1), MemcpyKind.DEVICE_TO_HOST, Small.ONE, 1.0, "1", None,
                     np.float32(1), np.array(3), Liar()]


def _rule(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


@pytest.mark.parametrize("x", VALUES, ids=lambda x: type(x).__name__)
def test_is_int_answers_the_rule_every_time(x: Any) -> None:
    assert is_int(x) is _rule(x)
    assert is_int(x) is _rule(x)  # the second answer may come from the remembered types


class BoolInDisguise(int):
    """An int subclass that claims to be a bool (isinstance(x, bool) believes it)."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return bool


def test_a_type_whose_instances_lie_is_never_remembered() -> None:
    for _ in range(2):
        assert is_int(BoolInDisguise(1)) is _rule(BoolInDisguise(1)) is False
