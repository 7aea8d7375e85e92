"""Smoke test of the host ABI emulator at the C level: build both libraries with gcc, dlopen
them with ctypes and drive a few functions directly (the full validation is the conformance
suite run through the acl binding)."""

from __future__ import annotations

import ctypes as C
import shutil
import struct

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")

VP = C.c_void_p


@pytest.fixture(scope="module")
def libs():
    from mdlri_conformance.backends.acl.emulator.build import emulator_library, kernel_library

    emu_path, kern_path = emulator_library(), kernel_library()
    lib = C.CDLL(str(emu_path))
    sig = {
        "aclInit": (C.c_int, [C.c_char_p]),
        "aclrtSetDevice": (C.c_int, [C.c_int32]),
        "aclrtMalloc": (C.c_int, [C.POINTER(VP), C.c_size_t, C.c_int]),
        "aclrtFree": (C.c_int, [VP]),
        "aclrtMemcpy": (C.c_int, [VP, C.c_size_t, VP, C.c_size_t, C.c_int]),
        "aclrtCreateStream": (C.c_int, [C.POINTER(VP)]),
        "aclrtDestroyStream": (C.c_int, [VP]),
        "aclrtSynchronizeStreamWithTimeout": (C.c_int, [VP, C.c_int32]),
        "aclrtBinaryLoadFromFile": (C.c_int, [C.c_char_p, VP, C.POINTER(VP)]),
        "aclrtBinaryGetFunction": (C.c_int, [VP, C.c_char_p, C.POINTER(VP)]),
        "aclrtBinaryUnLoad": (C.c_int, [VP]),
        "aclrtLaunchKernelWithHostArgs": (C.c_int, [VP, C.c_uint32, VP, VP, VP, C.c_size_t,
                                                    VP, C.c_size_t]),
        "aclmdlRICaptureBegin": (C.c_int, [VP, C.c_int]),
        "aclmdlRICaptureEnd": (C.c_int, [VP, C.POINTER(VP)]),
        "aclmdlRIExecuteAsync": (C.c_int, [VP, VP]),
        "aclmdlRIDestroy": (C.c_int, [VP]),
        "aclmdlRIGetStreams": (C.c_int, [VP, VP, C.POINTER(C.c_uint32)]),
        "aclGetRecentErrMsg": (C.c_char_p, []),
        "mdlriEmuVersion": (C.c_char_p, []),
        "mdlriEmuLiveCounts": (C.c_int, [C.POINTER(C.c_uint64)] * 4),
    }
    for name, (res, args) in sig.items():
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    assert lib.aclInit(None) in (0, 100002)
    assert lib.aclrtSetDevice(0) == 0
    return lib, str(kern_path)


def _malloc(lib, n: int) -> int:
    p = VP()
    assert lib.aclrtMalloc(C.byref(p), n, 0) == 0
    assert p.value and p.value % 64 == 0
    return p.value


def _h2d(lib, dst: int, arr: np.ndarray) -> None:
    assert lib.aclrtMemcpy(dst, arr.nbytes, arr.ctypes.data, arr.nbytes, 1) == 0


def _d2h(lib, src: int, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=np.int32)
    assert lib.aclrtMemcpy(out.ctypes.data, out.nbytes, src, out.nbytes, 2) == 0
    return out


def test_build_is_cached(libs) -> None:
    from mdlri_conformance.backends.acl.emulator.build import emulator_library, kernel_library

    assert emulator_library().is_file() and kernel_library().is_file()
    assert emulator_library() == emulator_library()
    lib, _ = libs
    assert b"mdlri" in lib.mdlriEmuVersion()


def test_malloc_memcpy_round_trip(libs) -> None:
    lib, _ = libs
    dev = _malloc(lib, 64)
    data = np.arange(16, dtype=np.int32) * 7 - 3
    _h2d(lib, dev, data)
    assert (_d2h(lib, dev, 16) == data).all()
    assert lib.aclrtMemcpy(dev, 4, data.ctypes.data, 8, 1) == 107000  # count > destMax
    assert lib.aclrtFree(dev) == 0
    assert lib.aclrtFree(None) == 100000
    assert lib.aclrtFree(dev) == 107000
    assert lib.aclGetRecentErrMsg()  # the last failure left a message


def test_no_context_in_new_thread(libs) -> None:
    import threading

    lib, _ = libs
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("rc", lib.aclrtCreateStream(
        C.byref(VP()))))
    t.start()
    t.join()
    assert box["rc"] == 107002


def test_capture_and_execute_seed_pair(libs) -> None:
    lib, kpath = libs
    counts = [C.c_uint64() for _ in range(4)]
    assert lib.mdlriEmuLiveCounts(*map(C.byref, counts)) == 0
    before = [c.value for c in counts]

    b, fmain, fpost, s, m = VP(), VP(), VP(), VP(), VP()
    assert lib.aclrtBinaryLoadFromFile(kpath.encode(), None, C.byref(b)) == 0
    assert lib.aclrtBinaryGetFunction(b, b"fallback_main", C.byref(fmain)) == 0
    assert lib.aclrtBinaryGetFunction(b, b"fallback_postprocess", C.byref(fpost)) == 0
    assert lib.aclrtCreateStream(C.byref(s)) == 0
    inp, mid, out = (_malloc(lib, 32) for _ in range(3))
    x = np.arange(1, 9, dtype=np.int32)
    _h2d(lib, inp, x)
    _h2d(lib, out, np.full(8, -1, dtype=np.int32))

    assert lib.aclmdlRICaptureBegin(s, 2) == 0
    for f, a, o in ((fmain, inp, mid), (fpost, mid, out)):
        args = C.create_string_buffer(struct.pack("<QQ", a, o), 16)
        assert lib.aclrtLaunchKernelWithHostArgs(f, 1, s, None, args, 16, None, 0) == 0
    assert lib.aclmdlRICaptureEnd(s, C.byref(m)) == 0 and m.value
    n = C.c_uint32()
    assert lib.aclmdlRIGetStreams(m, None, C.byref(n)) == 0 and n.value == 1
    assert lib.aclrtSynchronizeStreamWithTimeout(s, 5000) == 0
    assert (_d2h(lib, out, 8) == -1).all()  # captured, not executed

    for k in range(2):
        assert lib.aclmdlRIExecuteAsync(m, s) == 0
        assert lib.aclrtSynchronizeStreamWithTimeout(s, 5000) == 0
        assert (_d2h(lib, out, 8) == (x + 10) * 2).all()

    assert lib.aclmdlRIDestroy(m) == 0
    assert lib.aclmdlRIDestroy(m) == 107017  # graveyard: stale handle detected
    assert lib.aclrtDestroyStream(s) == 0
    assert lib.aclrtBinaryUnLoad(b) == 0
    for p in (inp, mid, out):
        assert lib.aclrtFree(p) == 0
    assert lib.mdlriEmuLiveCounts(*map(C.byref, counts)) == 0
    assert [c.value for c in counts] == before


def _readme_exports() -> set[str]:
    """The function names the README's "Exported symbols (exactly these)" paragraph lists."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "backends" / "acl" / "emulator"
              / "README.md").read_text()
    para = readme.split("Exported symbols (exactly these):", 1)[1].split("\n\n", 1)[0]
    listed = para.split("functions `", 1)[1].split("`", 1)[0]
    extras = re.findall(r"\b(mdlriEmu\w+)\(", para)
    return set(listed.split()) | set(extras)


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm not on PATH")
def test_exports_are_exactly_the_readme_list(libs) -> None:
    """Every exported function is documented and every documented one exported."""
    import subprocess

    from mdlri_conformance.backends.acl.emulator.build import emulator_library

    out = subprocess.run(["nm", "-D", "--defined-only", str(emulator_library())],
                         capture_output=True, text=True, check=True).stdout
    exported = {cols[2] for cols in (line.split() for line in out.splitlines())
                if len(cols) == 3 and cols[1] == "T"}
    assert exported == _readme_exports()


def test_fault_names_match_the_catalogue() -> None:
    """The faults the emulator reads from MDLRI_EMU_FAULTS (faults.c) are exactly
    backends/acl/emulator_faults.py's EMULATOR_FAULTS, so `--fault` accepts each of them."""
    import re
    from pathlib import Path

    from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS

    src = (Path(__file__).resolve().parents[1] / "backends" / "acl" / "emulator" / "src"
           / "faults.c").read_text()
    names = set(re.findall(r'\[F_\w+\] = "([a-z0-9-]+)"', src))
    assert names == set(EMULATOR_FAULTS)


def test_compiler_comes_from_cc(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """CC is split like shell words (``ccache gcc``); a missing compiler is one line saying
    what to do."""
    from mdlri_conformance.backends.acl.emulator.build import CompilerNotFound, compiler

    monkeypatch.setenv("CC", "gcc -O0")
    assert compiler() == ["gcc", "-O0"]
    monkeypatch.setenv("CC", "mdlri-no-such-cc")
    with pytest.raises(CompilerNotFound, match=r"^C compiler CC='mdlri-no-such-cc' not found"):
        compiler()
    monkeypatch.delenv("CC")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CompilerNotFound, match=r"^gcc not found: install gcc or set CC$"):
        compiler()


def test_first_error_line() -> None:
    from mdlri_conformance.backends.acl.emulator.build import first_error_line

    out = ("In file included from a.h:1,\n  from b.c:2:\n"
           "b.c:3:1: warning: unused\nb.c:9:5: error: expected ';'\nb.c:10:1: error: more\n")
    assert first_error_line(out) == "b.c:9:5: error: expected ';'"
    assert first_error_line("ld: cannot find -lfoo\n") == "ld: cannot find -lfoo"
    assert first_error_line("") == "no output"
    assert len(first_error_line("error: " + "x" * 1000)) == 240
