"""The kernel catalog: argument layouts (C natural alignment) and numpy semantics."""

from __future__ import annotations

import numpy as np
import pytest

from mdlri_conformance.kernel import catalog


class FlatMemory:
    """A toy device memory for checking kernel bodies."""

    def __init__(self, base: int = 0x1000, size: int = 4096) -> None:
        self.base = base
        self.buf = np.zeros(size, dtype=np.uint8)

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        o = addr - self.base
        return self.buf[o:o + nbytes].copy()

    def write(self, addr: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8)
        o = addr - self.base
        self.buf[o:o + raw.size] = raw


@pytest.mark.parametrize("name, size", [
    ("fallback_main", 16), ("fallback_postprocess", 16), ("affine", 32), ("add", 32),
    ("accumulate", 24), ("fill", 16), ("copy", 24),
])
def test_args_sizes_follow_c_natural_alignment(name: str, size: int) -> None:
    assert catalog.get(name).args_size == size


def test_pack_unpack_round_trip_and_errors() -> None:
    k = catalog.get("affine")
    data = k.pack(x=0x12C040000000, y=0x12C040000100, n=8, a=-3, b=7)
    assert len(data) == 32
    assert k.unpack(data) == {"x": 0x12C040000000, "y": 0x12C040000100, "n": 8, "a": -3, "b": 7}
    with pytest.raises(ValueError):
        k.pack(x=1, y=2, n=3, a=4)
    with pytest.raises(KeyError, match="unknown kernel"):
        catalog.get("nope")


def test_seed_pair_semantics() -> None:
    mem = FlatMemory()
    inp, out, out2 = 0x1000, 0x1100, 0x1200
    catalog.write_i32(mem, inp, np.arange(1, 9))
    catalog.get("fallback_main").run(mem, catalog.get("fallback_main").pack(input=inp, output=out))
    assert catalog.read_i32(mem, out, 8).tolist() == list(range(11, 19))
    catalog.get("fallback_postprocess").run(
        mem, catalog.get("fallback_postprocess").pack(input=out, output=out2))
    assert catalog.read_i32(mem, out2, 8).tolist() == [2 * v for v in range(11, 19)]


def test_parametric_family_semantics() -> None:
    mem = FlatMemory()
    a, b, c = 0x1000, 0x1100, 0x1200
    catalog.write_i32(mem, a, np.array([1, 2, 3, 4]))
    catalog.write_i32(mem, b, np.array([10, 20, 30, 40]))
    catalog.get("add").run(mem, catalog.get("add").pack(a=a, b=b, out=c, n=4))
    assert catalog.read_i32(mem, c, 4).tolist() == [11, 22, 33, 44]
    catalog.get("accumulate").run(mem, catalog.get("accumulate").pack(acc=c, x=a, n=4))
    assert catalog.read_i32(mem, c, 4).tolist() == [12, 24, 36, 48]
    catalog.get("affine").run(mem, catalog.get("affine").pack(x=a, y=c, n=4, a=3, b=-1))
    assert catalog.read_i32(mem, c, 4).tolist() == [2, 5, 8, 11]
    catalog.get("fill").run(mem, catalog.get("fill").pack(out=c, n=3, value=-7))
    assert catalog.read_i32(mem, c, 4).tolist() == [-7, -7, -7, 11]
    catalog.get("copy").run(mem, catalog.get("copy").pack(src=b, dst=c, n=2))
    assert catalog.read_i32(mem, c, 4).tolist() == [10, 20, -7, 11]


def test_int32_arithmetic_wraps() -> None:
    mem = FlatMemory()
    catalog.write_i32(mem, 0x1000, np.array([2**31 - 1], dtype=np.int64).astype(np.int32))
    catalog.get("affine").run(mem, catalog.get("affine").pack(x=0x1000, y=0x1100, n=1, a=1, b=1))
    assert catalog.read_i32(mem, 0x1100, 1).tolist() == [-(2**31)]


def test_special_kernels() -> None:
    """wait_flag: 24-byte struct, ready once flag[0] != 0, then out[0] = value; trap_if: 8
    bytes, raises KernelTrap when flag[0] != 0, else does nothing."""
    mem = FlatMemory()
    wf, tr = catalog.get("wait_flag"), catalog.get("trap_if")
    assert (wf.args_size, tr.args_size) == (24, 8)
    args = wf.pack(flag=0x1000, out=0x1010, value=42)
    catalog.write_i32(mem, 0x1010, np.array([-1]))
    assert not wf.is_ready(mem, args)
    wf.run(mem, args)
    assert catalog.read_i32(mem, 0x1010, 1).tolist() == [-1]
    catalog.write_i32(mem, 0x1000, np.array([1]))
    assert wf.is_ready(mem, args)
    wf.run(mem, args)
    assert catalog.read_i32(mem, 0x1010, 1).tolist() == [42]
    assert catalog.get("fill").is_ready(mem, catalog.get("fill").pack(out=0x1010, n=1, value=0))
    tr.run(mem, tr.pack(flag=0x1020))  # flag 0: nothing
    with pytest.raises(catalog.KernelTrap):
        tr.run(mem, tr.pack(flag=0x1000))
