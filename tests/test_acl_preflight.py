"""Bad input to the acl backend is an error, never a silent pass (``backends.acl.create`` and
``backends.acl.preflight``).

A library named explicitly that names no ACL runtime, a device the runtime does not have, an
explicit kernel binary that does not exist and faults the emulator cannot take in this process
raise :class:`BackendConfigError` with one line (the suite exits 2). A runtime that is merely
unavailable (discovery finds nothing, the emulator cannot be built) does not raise: the backend
carries a one-line reason saying what to do, and ``preflight`` returns quietly.

Emulator build failures run in a temporary ``MDLRI_CACHE_DIR`` (never the shared cache) and
fail before compiling anything; the device and fault cases use the emulator as every other
emulator test does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import time
from pathlib import Path

import pytest

import mdlri_conformance.backends.acl as acl
from mdlri_conformance.backends.acl import create, preflight
from mdlri_conformance.backends.contract import BackendConfigError

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not on PATH")

_NO_CANN_VARS = ("MDLRI_ACL_LIB", "ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH",
                 "ASCEND_TOOLKIT_HOME", "LD_LIBRARY_PATH", "MDLRI_KERNEL_BINARY")


def one_line(msg: str | None) -> str:
    """``msg`` is a single line without traceback text (and is returned)."""
    assert msg, "expected a reason"
    assert "\n" not in msg and "Traceback" not in msg, msg
    return msg


def config_error(*, lib: object = None, **options: object) -> tuple[str, str]:
    """The messages of create(...) and preflight(...), both of which must raise."""
    create_opts = {k: v for k, v in options.items() if k != "devices"}
    with pytest.raises(BackendConfigError) as c:
        create(lib=lib, **create_opts)  # type: ignore[arg-type]
    with pytest.raises(BackendConfigError) as p:
        preflight(lib=lib, **options)
    return one_line(str(c.value)), one_line(str(p.value))


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No library named or discoverable through the environment, HOME in a temp dir."""
    for var in _NO_CANN_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


@pytest.fixture
def build_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private MDLRI_CACHE_DIR for emulator-build tests."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(cache))
    return cache


# ---------------------------------------------------------------------------------------------
# a named library that is no ACL runtime


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope" / "libacl_rt.so"
    for msg in config_error(lib=str(path)):
        assert msg == f"--acl-lib {path}: no such file or directory"


def test_missing_file_named_by_the_environment(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "nope.so"
    monkeypatch.setenv("MDLRI_ACL_LIB", str(path))
    for msg in config_error():
        assert msg == f"MDLRI_ACL_LIB={path}: no such file or directory"


def test_bare_name_asks_for_a_path() -> None:
    for msg in config_error(lib="libacl_rt.so.no-such"):
        assert "no such file or directory (give the path of the library" in msg


def test_text_file(tmp_path: Path) -> None:
    path = tmp_path / "libacl_rt.so"
    path.write_text("this is not a library\n")
    for msg in config_error(lib=str(path)):
        assert msg == f"--acl-lib {path}: not a shared library (a text file)"


def test_directory_without_the_library(tmp_path: Path) -> None:
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / "libruntime.so").write_text("x")
    for msg in config_error(lib=str(tmp_path)):
        assert msg.startswith(f"--acl-lib {tmp_path}: no libacl_rt.so or libascendcl.so in "
                              "that directory")


def _libm_path() -> Path | None:
    """The file of the C math library, from where this process mapped it."""
    name = ctypes.util.find_library("m")
    if not name:
        return None
    ctypes.CDLL(name)
    for line in Path("/proc/self/maps").read_text().splitlines():
        if line.rstrip().endswith("/" + name) or line.rstrip().endswith("/libm.so.6"):
            return Path(line.split()[-1])
    return None


def test_shared_library_that_is_not_an_acl_runtime() -> None:
    libm = _libm_path()
    if libm is None:
        pytest.skip("no libm found (ctypes.util.find_library('m') and /proc/self/maps)")
    for msg in config_error(lib=str(libm)):
        assert msg == (f"--acl-lib {libm}: not an ACL runtime library (it does not export "
                       "aclInit, aclrtSetDevice, aclrtCreateStream); name libacl_rt.so or "
                       "libascendcl.so of a CANN install")


def test_missing_kernel_binary(tmp_path: Path) -> None:
    kb = tmp_path / "kernels.o"
    with pytest.raises(BackendConfigError, match=r"^--kernel-binary .*kernels\.o: no such file$"):
        preflight(lib="emulator", kernel_binary=str(kb))


# ---------------------------------------------------------------------------------------------
# unavailable, not bad input: no raise, one line saying what to do (returned by preflight)


@pytest.mark.skipif(any(Path(p).exists() for p in ("/usr/local/Ascend", "/opt/Ascend")),
                    reason="a system CANN install exists on this machine")
def test_discovery_finds_nothing(clean_env: pytest.MonkeyPatch) -> None:
    b = create()
    assert b.capabilities == frozenset()
    assert one_line(b.unsupported_reason()).startswith("no CANN runtime library")
    assert preflight(devices="0,7") == b.unsupported_reason()  # the run: NOTHING TESTED


def _build_failure(devices: str = "0,7") -> str:
    """create('emulator') is unavailable with one line; preflight does not raise (not even
    for a device it cannot check) and returns the same line (the run: NOTHING TESTED)."""
    b = create("emulator")
    assert b.capabilities == frozenset()
    reason = one_line(b.unsupported_reason())
    assert reason.startswith("cannot build the ACL emulator: ")
    assert preflight(lib="emulator", devices=devices) == reason
    return reason


def test_no_compiler(build_cache: Path, tmp_path: Path,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    assert _build_failure() == "cannot build the ACL emulator: gcc not found: install gcc or set CC"


def test_cc_not_found(build_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "mdlri-no-such-cc")
    assert _build_failure() == ("cannot build the ACL emulator: C compiler CC='mdlri-no-such-cc' "
                                "not found: install it or set CC to a C compiler such as gcc")


_FAKE_CC = """#!/bin/sh
for a in "$@"; do [ "$a" = --version ] && { echo fakecc 1.0; exit 0; }; done
echo "In file included from src/emu.h:3," >&2
echo "src/core.c:12:3: error: unknown type name 'boom'" >&2
echo "   12 |   boom x;" >&2
exit 1
"""


def test_compiler_error(build_cache: Path, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """CC is honoured; its first error line and the log of its full output are the reason."""
    cc = tmp_path / "fakecc"
    cc.write_text(_FAKE_CC)
    cc.chmod(0o755)
    monkeypatch.setenv("CC", str(cc))
    reason = _build_failure()
    assert reason.startswith(f"cannot build the ACL emulator: {cc} failed building "
                             "libmdlri_acl_emu.so: src/core.c:12:3: error: unknown type name "
                             "'boom' (full log: ")
    log = Path(reason.rsplit("(full log: ", 1)[1].rstrip(")"))
    assert log.is_file() and log.is_relative_to(build_cache)
    text = log.read_text()
    assert "In file included from" in text and "boom x;" in text and str(cc) in text


@needs_gcc
def test_real_gcc_error(build_cache: Path, monkeypatch: pytest.MonkeyPatch,
                        tmp_path: Path) -> None:
    """CC may carry arguments; a real gcc diagnostic's first error line is the reason."""
    monkeypatch.setenv("CC", f"gcc -include {tmp_path / 'missing.h'}")
    reason = _build_failure()
    assert "gcc failed building libmdlri_acl_emu.so: " in reason
    assert "missing.h" in reason and "error" in reason and "(full log: " in reason


def test_cache_not_writable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(A regular file in the cache path: root ignores permission bits.)"""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("MDLRI_CACHE_DIR", str(blocker / "cache"))
    if shutil.which(os.environ.get("CC", "gcc").split()[0]) is None:
        pytest.skip("no C compiler: the build stops before touching the cache")
    reason = _build_failure()
    assert reason == (f"cannot build the ACL emulator: cache directory {blocker / 'cache'} is "
                      "not writable (Not a directory): set MDLRI_CACHE_DIR to a writable "
                      "directory")


# ---------------------------------------------------------------------------------------------
# devices (emulator: 1 device unless MDLRI_EMU_DEVICE_COUNT says more, core.c device_count)


@needs_gcc
def test_device_the_emulator_does_not_have(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MDLRI_EMU_DEVICE_COUNT", raising=False)
    with pytest.raises(BackendConfigError) as exc:
        preflight(lib="emulator", devices="0,7")
    assert one_line(str(exc.value)) == (
        "--devices 0,7: device 7 does not exist (the ACL emulator reports 1 device: 0; set "
        "MDLRI_EMU_DEVICE_COUNT for more)")
    with pytest.raises(BackendConfigError, match=r"^--devices 1,2,3: devices 1, 2, 3 do not "):
        preflight(lib="emulator", devices=[1, 2, 3])
    with pytest.raises(BackendConfigError, match=r"^--devices 2: device 2 does not exist"):
        preflight(lib="emulator", device=2)
    with pytest.raises(BackendConfigError, match=r"^--devices 7: device 7 does not exist"):
        create("emulator", device=7)  # without a preflight, the worker says it too
    assert preflight(lib="emulator", devices="0") is None
    monkeypatch.setenv("MDLRI_EMU_DEVICE_COUNT", "8")
    assert preflight(lib="emulator", devices="0,7") is None


@needs_gcc
def test_device_count_of_a_named_library() -> None:
    """The emulator named by its path is an ordinary library to the backend."""
    from mdlri_conformance.backends.acl.emulator.build import emulator_library
    path = emulator_library()
    with pytest.raises(BackendConfigError) as exc:
        preflight(lib=str(path), devices="0,7")
    assert str(exc.value) == "--devices 0,7: device 7 does not exist (the runtime reports 1 " \
                             "device: 0)"
    with pytest.raises(BackendConfigError, match="^--fault needs the ACL emulator"):
        create(lib=str(path), faults=["no-107039"])


def test_bad_device_list() -> None:
    with pytest.raises(BackendConfigError, match="expected comma-separated integers"):
        preflight(lib="emulator", devices="0,x")
    with pytest.raises(BackendConfigError, match="expected non-negative device ids"):
        preflight(lib="emulator", devices=[-1])


@needs_gcc
def test_preflight_is_fast_and_loads_nothing() -> None:
    """The device count comes from a subprocess: preflight leaves this process without an
    aclInit of its own (the emulator may already be mapped by other tests, never by it)."""
    from mdlri_conformance.backends.acl.emulator.build import emulator_library
    path = emulator_library()  # built (cached) before timing
    loaded = set(acl._loaded)
    start = time.monotonic()
    preflight(lib="emulator", devices="0")
    took = time.monotonic() - start
    assert set(acl._loaded) == loaded
    assert took < 10, f"preflight took {took:.1f} s"
    assert path.is_file()


# ---------------------------------------------------------------------------------------------
# faults


@needs_gcc
def test_faults_on_an_already_loaded_emulator() -> None:
    from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS
    b = create("emulator")
    try:
        assert b.unsupported_reason() is None
        loaded_with = acl._loaded_faults[str(b.lib_path)]
        wanted = next(f for f in sorted(EMULATOR_FAULTS) if f != loaded_with)
        with pytest.raises(BackendConfigError) as exc:
            create("emulator", faults=[wanted])
        msg = one_line(str(exc.value))
        assert msg == (f"--fault {wanted}: the ACL emulator is already loaded in this process "
                       f"with faults {loaded_with or '(none)'} (it reads MDLRI_EMU_FAULTS once, "
                       "at load); use a fresh process, e.g. -n 1")
        assert os.environ.get("MDLRI_EMU_FAULTS", "") == loaded_with  # nothing exported
    finally:
        b.close()


def test_unknown_fault() -> None:
    with pytest.raises(BackendConfigError, match=r"^--fault: .*bogus"):
        preflight(lib="emulator", faults=["bogus"])
