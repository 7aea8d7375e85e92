"""Build the host ABI emulator and the host kernel library with gcc, cached by content.

``emulator_library()`` and ``kernel_library()`` return the paths of
``libmdlri_acl_emu.so`` and ``libmdlri_host_kernels.so`` in
``$MDLRI_CACHE_DIR/emulator-<hash>/`` (default base ``~/.cache/mdlri-conformance``), where
``<hash>`` covers every source and header, the compiler, the flags and this file. A library
is compiled only when missing: into a temporary file in the same folder, then renamed into
place, so concurrent builders (pytest-xdist workers) never see a half-written file.

The compiler is ``$CC`` (split like shell words, so ``CC="ccache gcc"`` works), else ``gcc``.
A failure raises a :class:`BuildError` whose message is one line saying what to do:
:class:`CompilerNotFound` ("gcc not found: install gcc or set CC"), :class:`CompileFailed` (the
compiler's first error line and the path of ``build-<library>.log`` holding its full output),
:class:`CacheNotWritable` ("... set MDLRI_CACHE_DIR to a writable directory").

A coverage build (``$MDLRI_EMU_COVERAGE=1``, or ``emulator_library(coverage=True)``) is the
same sources compiled one object each with ``--coverage`` (gcc's gcov instrumentation) into
its own folder ``emulator-<hash>-coverage/``; :func:`gcov_env` points the counters the library
writes at process exit (``.gcda``) at a folder of the caller's. The normal build is unchanged.

The compiler lookup, the error classes, the digest and the atomic compile step are the neutral
helper's (``backends/cbuild.py``, shared with the virtual device); this module keeps the
emulator's own: its sources, one folder for both libraries, ``-ldl`` and the coverage build.

``python -m backends.acl.emulator.build`` prints the two paths.
"""

from __future__ import annotations

import importlib.resources
import os
import shutil
import tempfile
from pathlib import Path

from ....kernel import HOST_DIR, HOST_LIBRARY_NAME
# the compiler lookup, the error classes, the digest and the compile step are the neutral
# helper's; its names are re-exported here for the modules and tests that import them from
# this one
from ...cbuild import (BASE_CFLAGS, CACHE_VAR, BuildError, CacheNotWritable, CompileFailed,
                       CompilerNotFound, build_into, cache_base, cache_not_writable, compiler,
                       digest, first_error_line, print_paths, run_compiler)

__all__ = ["BuildError", "CacheNotWritable", "CompileFailed", "CompilerNotFound", "CACHE_VAR",
           "cache_base", "cache_dir", "compiler", "coverage_dir", "coverage_requested",
           "emulator_library", "first_error_line", "gcov_env", "kernel_library", "main"]

# the C sources are package data (installed beside this module, or the checkout's folders)
HERE = Path(str(importlib.resources.files("mdlri_conformance.backends.acl.emulator")))
EMU_INCLUDE = HERE / "include"
EMU_SRC = HERE / "src"

EMULATOR_NAME = "libmdlri_acl_emu.so"

CFLAGS = list(BASE_CFLAGS)
EMU_LIBS = ["-ldl"]
#: set to 1 to build and load the emulator with gcov instrumentation (deep campaigns)
COVERAGE_VAR = "MDLRI_EMU_COVERAGE"
COVERAGE_FLAGS = ["--coverage"]


def _sources() -> list[Path]:
    files = sorted(EMU_INCLUDE.glob("*.h")) + sorted(EMU_SRC.glob("*.[ch]"))
    files += sorted(HOST_DIR.glob("*.[ch]"))
    return files


def _digest(cc: list[str]) -> str:
    """One hash for both libraries: every source and header, this file, the compiler and the
    flags (so both live in one folder per source version)."""
    return digest([*_sources(), Path(__file__).resolve()], cc, [*CFLAGS, *EMU_LIBS])


def cache_dir() -> Path:
    """The folder holding this source version's libraries (created on demand)."""
    return cache_base() / f"emulator-{_digest(compiler())}"


def _build(name: str, sources: list[Path], extra: list[str]) -> Path:
    return build_into(cache_dir(), name, compiler(), sources, flags=extra)


def coverage_requested() -> bool:
    """True when ``$MDLRI_EMU_COVERAGE`` asks for the gcov-instrumented emulator."""
    return os.environ.get(COVERAGE_VAR, "").strip() not in ("", "0")


def emulator_library(coverage: bool | None = None) -> Path:
    """Path of ``libmdlri_acl_emu.so``, compiled if this source version is not cached yet;
    the gcov-instrumented one when ``coverage`` (default: :func:`coverage_requested`)."""
    if coverage is None:
        coverage = coverage_requested()
    if coverage:
        return _coverage_build()
    return _build(EMULATOR_NAME, sorted(EMU_SRC.glob("*.c")),
                  [f"-I{EMU_INCLUDE}", f"-I{EMU_SRC}", *EMU_LIBS])


def coverage_dir() -> Path:
    """The folder of the gcov-instrumented emulator: the library and ``obj/*.gcno``."""
    return cache_base() / f"emulator-{_digest(compiler())}-coverage"


def gcov_env(counters_dir: Path) -> dict[str, str]:
    """Environment that makes the instrumented emulator write its ``<source>.gcda`` files
    into ``counters_dir`` (gcc's GCOV_PREFIX, with the object folder's path stripped)."""
    obj = coverage_dir() / "obj"
    return {"GCOV_PREFIX": str(counters_dir), "GCOV_PREFIX_STRIP": str(len(obj.parts) - 1)}


def _coverage_build() -> Path:
    """Build the instrumented emulator: one object per source (so each has its own
    ``.gcno``) in a temporary sibling folder, renamed into place whole. The folder has the
    same depth as the final one, so :func:`gcov_env`'s strip count fits the objects' paths."""
    cc = compiler()
    final = coverage_dir()
    target = final / EMULATOR_NAME
    if target.is_file():
        return target
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
        (work / "obj").mkdir()
    except OSError as exc:
        raise cache_not_writable(final.parent, exc) from None
    try:
        objects = []
        compile_flags = [f for f in CFLAGS if f != "-shared"]
        logs = final.parent  # a failed build's log outlives its temporary folder
        for src in sorted(EMU_SRC.glob("*.c")):
            obj = work / "obj" / f"{src.stem}.o"
            run_compiler([*cc, *compile_flags, *COVERAGE_FLAGS, f"-I{EMU_INCLUDE}",
                          f"-I{EMU_SRC}", "-c", "-o", str(obj), str(src)], logs, EMULATOR_NAME)
            objects.append(str(obj))
        run_compiler([*cc, *CFLAGS, *COVERAGE_FLAGS, "-o", str(work / EMULATOR_NAME),
                      *objects, *EMU_LIBS], logs, EMULATOR_NAME)
        try:
            os.rename(work, final)
        except OSError:  # a concurrent builder's identical folder won, or the cache is odd
            if not target.is_file():
                raise cache_not_writable(final.parent, OSError("rename failed")) from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def kernel_library() -> Path:
    """Path of ``libmdlri_host_kernels.so`` (the catalog's kernels as host C)."""
    return _build(HOST_LIBRARY_NAME, sorted(HOST_DIR.glob("*.c")), [f"-I{HOST_DIR}"])


def main() -> int:
    """Print the two libraries' paths (building them); a build error is one line, status 1."""
    return print_paths(emulator_library, kernel_library)


if __name__ == "__main__":
    raise SystemExit(main())
