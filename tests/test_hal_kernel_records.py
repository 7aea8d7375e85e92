"""A kernel SQE whose pc points at a record of the virtual kernel binary runs the host kernel
the record names (``backends/hal/src/kbin.c``): how the real runtime's launches reach the
catalog kernels on the virtual device, with no pc bound from outside."""

from __future__ import annotations

import ctypes
import shutil
import struct
from pathlib import Path
from typing import Iterator

import pytest

from mdlri_conformance.backends.hal import kernel_binary as kb
from mdlri_conformance.backends.hal import sqe
from mdlri_conformance.backends.hal.build import hal_library, host_kernel_library
from mdlri_conformance.backends.hal.device import HalDevice
from mdlri_conformance.kernel.catalog import NATURAL
from tests.hal_helpers import dev_i32

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc is not installed: the virtual device cannot be built")

VAR = "MDLRI_HAL_HOST_KERNELS"
SPECS = list(NATURAL.values())


@pytest.fixture(scope="module")
def device() -> HalDevice:
    return HalDevice(hal_library())


@pytest.fixture
def dev(device: HalDevice, monkeypatch: pytest.MonkeyPatch) -> Iterator[HalDevice]:
    monkeypatch.setenv(VAR, str(host_kernel_library()))
    device.reset()
    yield device
    device.reset()


@pytest.fixture(scope="module")
def text() -> ctypes.Array[ctypes.c_char]:
    """The records as the runtime copies them: the binary's .text in (device) memory."""
    return ctypes.create_string_buffer(b"".join(kb.record(s) for s in SPECS))


def pc_of(text: ctypes.Array[ctypes.c_char], name: str) -> int:
    return ctypes.addressof(text) + [s.name for s in SPECS].index(name) * kb.RECORD_SIZE


def run_affine(dev: HalDevice, pc: int) -> tuple[sqe.Cqe, list[int]]:
    q = dev.alloc(stream_id=3)
    n = 6
    x, y = dev_i32(dev, list(range(n))), dev_i32(dev, [0] * n)
    args = dev.put(struct.pack("<QQiii4x", ctypes.addressof(x), ctypes.addressof(y), n, 5, 1))
    dev.submit(q.sq, sqe.kernel(3, 9, pc, args, block_dim=2))
    cqes = dev.collect(q.cq, 1)
    assert len(cqes) == 1, cqes
    return cqes[0], list(y)


def test_the_record_at_the_pc_names_the_kernel_that_runs(dev: HalDevice, text) -> None:
    c, y = run_affine(dev, pc_of(text, "affine"))
    assert (c.task_id, c.error_type) == (9, 0), c
    assert y == [5 * i + 1 for i in range(6)]


def test_the_record_reads_back(text) -> None:
    rec = kb.parse_record(bytes(text)[SPECS.index(NATURAL["copy"]) * kb.RECORD_SIZE:])
    assert rec is not None and (rec.name, rec.args_size) == ("copy", NATURAL["copy"].args_size)


@pytest.mark.parametrize("case", ["no host kernel library", "wrong magic", "unmapped pc",
                                  "unknown name"])
def test_a_pc_that_names_no_kernel_is_an_exception(dev: HalDevice, text, case: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Anything but a well-formed record naming a host kernel is the TS's kernel exception,
    never a run of some other kernel and never a crash of the device."""
    pc = pc_of(text, "affine")
    keep: list[object] = []
    if case == "no host kernel library":
        monkeypatch.delenv(VAR)
    elif case == "wrong magic":
        bad = ctypes.create_string_buffer(b"NOTMAGIC" + kb.record(NATURAL["affine"])[8:])
        keep.append(bad)
        pc = ctypes.addressof(bad)
    elif case == "unmapped pc":
        pc = 0x10
    else:
        rec = bytearray(kb.record(NATURAL["affine"]))
        rec[24:30] = b"zffine"
        bad = ctypes.create_string_buffer(bytes(rec))
        keep.append(bad)
        pc = ctypes.addressof(bad)
    c, y = run_affine(dev, pc)
    assert (c.error_type, c.ts_error()) == (sqe.ERR_EXCEPTION, sqe.TS_ERROR_TASK_EXCEPTION), c
    assert y == [0] * 6
