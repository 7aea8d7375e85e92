"""The emulator's kernel side at the C level: every block of a launch runs with its index
(KRN-01: a kernel that ignores its block index is wrong here too), the parameter tables the
host kernels export and what aclrtFunctionGetParamCount/Info report (KRN-02, KRN-03), and
MDLRI_EMU_PARAM_LAYOUT=wide, which reads the launched bytes in a wider layout (in a
subprocess: the emulator reads the variable once, at load)."""

from __future__ import annotations

import ctypes as C
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from mdlri_conformance.kernel import catalog

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")

VP = C.c_void_p
SZ = C.c_size_t
N = 67

#: a host kernel library whose `accumulate` ignores its block index (the whole operation on
#: every block), with the real one's parameter table
RACY_KERNELS = r"""
#include <stddef.h>
#include <stdint.h>
#include <string.h>
typedef struct { int32_t *acc; int32_t *x; int32_t n; } args_t;
typedef struct { uint32_t offset, size; } param_t;
typedef struct { uint32_t count; param_t params[8]; } params_t;
__attribute__((visibility("default"))) const params_t accumulate__params =
    {3, {{0, 8}, {8, 8}, {16, 4}}};
__attribute__((visibility("default"))) void accumulate(void *args, size_t size, uint32_t idx,
                                                       uint32_t num) {
    (void)idx; (void)num;
    args_t a;
    if (size < sizeof a) return;
    memcpy(&a, args, sizeof a);
    for (int32_t i = 0; i < a.n; i++) a.acc[i] += a.x[i];
}
"""


class Emu:
    """The emulator library, typed for the calls these tests make."""

    SIG = {
        "aclInit": (C.c_int, [C.c_char_p]),
        "aclrtSetDevice": (C.c_int, [C.c_int32]),
        "aclrtMalloc": (C.c_int, [C.POINTER(VP), SZ, C.c_int]),
        "aclrtMemcpy": (C.c_int, [VP, SZ, VP, SZ, C.c_int]),
        "aclrtCreateStream": (C.c_int, [C.POINTER(VP)]),
        "aclrtSynchronizeStreamWithTimeout": (C.c_int, [VP, C.c_int32]),
        "aclrtBinaryLoadFromFile": (C.c_int, [C.c_char_p, VP, C.POINTER(VP)]),
        "aclrtBinaryGetFunction": (C.c_int, [VP, C.c_char_p, C.POINTER(VP)]),
        "aclrtLaunchKernelWithHostArgs": (C.c_int, [VP, C.c_uint32, VP, VP, VP, SZ, VP, SZ]),
        "aclrtFunctionGetParamCount": (C.c_int, [VP, C.POINTER(SZ)]),
        "aclrtFunctionGetParamInfo": (C.c_int, [VP, SZ, C.POINTER(SZ), C.POINTER(SZ)]),
    }

    def __init__(self, path: str) -> None:
        self.lib = C.CDLL(path)
        for name, (res, args) in self.SIG.items():
            fn = getattr(self.lib, name)
            fn.restype, fn.argtypes = res, args
        assert self.lib.aclInit(None) in (0, 100002)
        assert self.lib.aclrtSetDevice(0) == 0
        s = VP()
        assert self.lib.aclrtCreateStream(C.byref(s)) == 0
        self.stream = s

    def buffer(self, values: np.ndarray) -> int:
        p = VP()
        arr = np.ascontiguousarray(values, dtype=np.int32)
        assert self.lib.aclrtMalloc(C.byref(p), arr.nbytes, 0) == 0
        assert self.lib.aclrtMemcpy(p.value, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0
        return int(p.value)

    def read(self, addr: int, n: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int32)
        assert self.lib.aclrtMemcpy(out.ctypes.data, out.nbytes, addr, out.nbytes, 2) == 0
        return out

    def function(self, binary: str, name: str) -> int:
        b, f = VP(), VP()
        assert self.lib.aclrtBinaryLoadFromFile(binary.encode(), None, C.byref(b)) == 0
        assert self.lib.aclrtBinaryGetFunction(b, name.encode(), C.byref(f)) == 0
        return int(f.value)

    def launch(self, func: int, blocks: int, args: bytes) -> None:
        buf = C.create_string_buffer(args, len(args))
        assert self.lib.aclrtLaunchKernelWithHostArgs(func, blocks, self.stream, None, buf,
                                                      len(args), None, 0) == 0
        assert self.lib.aclrtSynchronizeStreamWithTimeout(self.stream, 5000) == 0


@pytest.fixture(scope="module")
def emu() -> tuple[Emu, str]:
    from mdlri_conformance.backends.acl.emulator.build import emulator_library, kernel_library
    return Emu(str(emulator_library())), str(kernel_library())


def _accumulate(emu: Emu, binary: str, blocks: int) -> tuple[np.ndarray, np.ndarray]:
    acc0 = np.arange(N, dtype=np.int32) * 3
    x = np.arange(N, dtype=np.int32) + 100
    acc, xb = emu.buffer(acc0), emu.buffer(x)
    func = emu.function(binary, "accumulate")
    emu.launch(func, blocks, catalog.NATURAL["accumulate"].pack(acc=acc, x=xb, n=N))
    return emu.read(acc, N), acc0 + x


@pytest.mark.parametrize("blocks", [1, 2, 3, 8, 13, 100])
def test_every_block_runs_its_share(emu, blocks: int) -> None:
    e, kernels = emu
    got, want = _accumulate(e, kernels, blocks)
    assert got.tolist() == want.tolist()


def test_a_kernel_that_ignores_its_block_index_is_wrong_on_several_blocks(emu, tmp_path) -> None:
    """The emulator calls the kernel once per block: the racy accumulate adds x once per block
    (the spec KRN-01 fails on such a kernel library)."""
    e, _ = emu
    src, lib = tmp_path / "racy.c", tmp_path / "libracy.so"
    src.write_text(RACY_KERNELS)
    subprocess.run(["gcc", "-std=c11", "-shared", "-fPIC", "-o", str(lib), str(src)],
                   check=True, capture_output=True)
    got, want = _accumulate(e, str(lib), 1)
    assert got.tolist() == want.tolist()
    got, want = _accumulate(e, str(lib), 3)
    acc0 = want - (np.arange(N, dtype=np.int32) + 100)
    assert got.tolist() == (acc0 + 3 * (np.arange(N, dtype=np.int32) + 100)).tolist()


def test_param_tables_are_the_catalog_structs(emu) -> None:
    """Every host kernel reports its struct's members (offsetof/sizeof), which are the
    catalog's C layouts (KRN-02)."""
    e, kernels = emu
    for name, spec in catalog.NATURAL.items():
        func = e.function(kernels, name)
        n = SZ(99)
        assert e.lib.aclrtFunctionGetParamCount(func, C.byref(n)) == 0, name
        slots = []
        for i in range(n.value):
            off, size = SZ(), SZ()
            assert e.lib.aclrtFunctionGetParamInfo(func, i, C.byref(off), C.byref(size)) == 0
            slots.append((off.value, size.value))
        assert tuple(slots) == spec.layout, name


def test_param_info_codes(emu) -> None:
    """KRN-03 at the C level: NULL func / count / both outs 100000, index out of range
    107000 (a 64-bit index too), a NULL out-pointer leaves only that one unwritten."""
    e, kernels = emu
    func = e.function(kernels, "fill")
    n, off, size = SZ(7), SZ(7), SZ(7)
    assert e.lib.aclrtFunctionGetParamCount(None, C.byref(n)) == 100000 and n.value == 7
    assert e.lib.aclrtFunctionGetParamCount(func, None) == 100000
    assert e.lib.aclrtFunctionGetParamInfo(None, 0, C.byref(off), C.byref(size)) == 100000
    assert e.lib.aclrtFunctionGetParamInfo(func, 0, None, None) == 100000
    for index in (3, 1 << 32, (1 << 64) - 1):
        assert e.lib.aclrtFunctionGetParamInfo(func, index, C.byref(off), C.byref(size)) \
            == 107000
    assert (off.value, size.value) == (7, 7)
    assert e.lib.aclrtFunctionGetParamInfo(func, 2, None, C.byref(size)) == 0
    assert (off.value, size.value) == (7, 4)
    assert e.lib.aclrtFunctionGetParamInfo(func, 2, C.byref(off), None) == 0
    assert off.value == 12


WIDE_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    from test_emulator_kernels import Emu, N
    import numpy as np
    from mdlri_conformance.backends.acl.emulator.build import emulator_library, kernel_library
    from mdlri_conformance.kernel import catalog
    e = Emu(str(emulator_library()))
    func = e.function(str(kernel_library()), "affine")
    x = e.buffer(np.arange(N, dtype=np.int32))
    out = {{}}
    for name, slots in (("natural", None), ("wide", ((0, 8), (8, 8), (16, 8), (24, 8), (32, 8)))):
        spec = catalog.NATURAL["affine"] if slots is None else catalog.install_layout("affine", slots)
        y = e.buffer(np.full(N, -1, dtype=np.int32))
        e.launch(func, 3, spec.pack(x=x, y=y, n=N, a=3, b=1))
        out[name] = e.read(y, N).tolist()
    print(json.dumps(out))
""")


def test_wide_layout_reads_the_launched_bytes_in_8_byte_slots(tmp_path) -> None:
    """MDLRI_EMU_PARAM_LAYOUT=wide: arguments packed in the reported wide layout give the
    catalog's output; the C struct's bytes are read wrongly (so the follow path is needed)."""
    script = tmp_path / "wide.py"
    script.write_text(WIDE_SCRIPT.format(tests=str(Path(__file__).parent)))
    env = {**os.environ, "MDLRI_EMU_PARAM_LAYOUT": "wide"}
    res = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    want = (3 * np.arange(N) + 1).tolist()
    assert out["wide"] == want
    assert out["natural"] != want
