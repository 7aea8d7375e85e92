"""What the virtual device's own tests share: the device (one per module, reset around each
test), C buffers (host or device memory) and their addresses, polling an SQ's head, and the one CQE a step expects."""

from __future__ import annotations

import ctypes
import time
from typing import Iterator

import pytest

from mdlri_conformance.backends.hal import sqe
from mdlri_conformance.backends.hal.build import hal_library
from mdlri_conformance.backends.hal.device import PROP_SQ_HEAD, HalDevice

#: polls give up after this long: only reached when something is wrong
LONG_MS = 10000


@pytest.fixture(scope="module")
def device() -> HalDevice:
    return HalDevice(hal_library())


@pytest.fixture
def dev(device: HalDevice) -> Iterator[HalDevice]:
    device.reset()
    yield device
    device.reset()


def i32(values: list[int]) -> ctypes.Array[ctypes.c_int32]:
    return (ctypes.c_int32 * len(values))(*values)


def dev_i32(dev: HalDevice, values: list[int]) -> ctypes.Array[ctypes.c_int32]:
    """``values`` in device memory (a kernel touches nothing else)."""
    arr = (ctypes.c_int32 * len(values)).from_address(dev.malloc(4 * max(len(values), 1)))
    arr[:] = values
    return arr


def address(buf: ctypes.Array) -> int:  # type: ignore[type-arg]
    return ctypes.addressof(buf)


def wait_head(dev: HalDevice, sq: int, head: int) -> int:
    """Poll the SQ's head until it reaches ``head`` (bounded by :data:`LONG_MS`)."""
    for _ in range(LONG_MS // 5):
        if dev.query(sq, PROP_SQ_HEAD) == head:
            break
        time.sleep(0.005)
    return dev.query(sq, PROP_SQ_HEAD)


def only(cqes: list[sqe.Cqe]) -> sqe.Cqe:
    assert len(cqes) == 1, f"expected one CQE, observed {cqes}"
    return cqes[0]
