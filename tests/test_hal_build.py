"""Building the virtual device: the cached gcc helper (``backends/cbuild.py``), the library
names the runtime loads, and the device's independence from the simulator and the emulator."""

from __future__ import annotations

import ast
import ctypes
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from mdlri_conformance.backends import cbuild
from mdlri_conformance.backends.hal import build

ROOT = Path(__file__).resolve().parents[1]
HAL = ROOT / "backends" / "hal"

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

SQCQ_ENTRY_POINTS = ("halSqCqAllocate", "halSqCqFree", "halSqTaskSend", "halCqReportRecv",
                     "halSqCqQuery", "halSqCqConfig")


@needs_gcc
def test_libascend_hal_is_the_device_library() -> None:
    lib, link = build.hal_library(), build.ascend_hal_library()
    assert link.name == "libascend_hal.so" and link.resolve() == lib.resolve()
    loaded = ctypes.CDLL(str(link))
    for name in SQCQ_ENTRY_POINTS:
        assert hasattr(loaded, name), f"{name} is not exported"


@needs_gcc
def test_a_cached_library_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cbuild.CACHE_VAR, str(tmp_path))
    src = tmp_path / "one.c"
    src.write_text("__attribute__((visibility(\"default\"))) int one(void) { return 1; }\n")
    first = cbuild.shared_library("t", "libone.so", [src])
    stamp = first.stat().st_mtime_ns
    assert cbuild.shared_library("t", "libone.so", [src]) == first
    assert first.stat().st_mtime_ns == stamp, "an unchanged source is not compiled again"
    src.write_text("__attribute__((visibility(\"default\"))) int one(void) { return 2; }\n")
    second = cbuild.shared_library("t", "libone.so", [src])
    assert second != first and ctypes.CDLL(str(second)).one() == 2


@needs_gcc
def test_a_compile_error_is_one_line_with_its_log(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cbuild.CACHE_VAR, str(tmp_path))
    src = tmp_path / "bad.c"
    src.write_text("int broken( {\n")
    with pytest.raises(cbuild.CompileFailed) as info:
        cbuild.shared_library("t", "libbad.so", [src])
    message = str(info.value)
    assert "\n" not in message and "error" in message
    assert info.value.log is not None and info.value.log.is_file()


def test_a_missing_compiler_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-xyz")
    with pytest.raises(cbuild.CompilerNotFound, match="^C compiler CC='no-such-compiler-xyz' "
                                                      "not found"):
        cbuild.compiler()


def test_the_device_imports_nothing_of_the_simulator_or_emulator() -> None:
    """Three independent implementations: the device's Python and C reach neither
    backends/sim nor backends/acl/emulator."""
    for py in HAL.glob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                assert not re.search(r"(^|\.)(sim|acl|emulator)(\.|$)", name), \
                    f"{py.name} imports {name}"
    emulator_headers = {h.name for h in (ROOT / "backends" / "acl" / "emulator").rglob("*.h")}
    assert emulator_headers, "the emulator's headers are where this test looks"
    for c in [*HAL.glob("src/*.[ch]"), *HAL.glob("include/*.h")]:
        for inc in re.findall(r'#include\s*[<"]([^>"]+)[>"]', c.read_text()):
            assert Path(inc).name not in emulator_headers and "emulator" not in inc, \
                f"{c.name} includes {inc}"


def test_the_wheel_ships_the_device_sources() -> None:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "mdlri_conformance.backends.hal" in cfg["packages"]
    shipped = cfg["package-data"]["mdlri_conformance.backends.hal"]
    for pattern in ("README.md", "include/*.h", "src/*.c", "src/*.h"):
        assert pattern in shipped
        assert any(HAL.glob(pattern)), f"{pattern} matches nothing"
