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

``python -m backends.acl.emulator.build`` prints the two paths.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# the C sources are package data (installed beside this module, or the checkout's folders)
HERE = Path(str(importlib.resources.files("mdlri_conformance.backends.acl.emulator")))
EMU_INCLUDE = HERE / "include"
EMU_SRC = HERE / "src"
KERNEL_DIR = Path(str(importlib.resources.files("mdlri_conformance.kernel"))) / "host"

#: environment variable naming the cache base directory
CACHE_VAR = "MDLRI_CACHE_DIR"

EMULATOR_NAME = "libmdlri_acl_emu.so"
KERNELS_NAME = "libmdlri_host_kernels.so"

CFLAGS = ["-std=c11", "-O2", "-fPIC", "-shared", "-pthread", "-Wall", "-Werror",
          "-fvisibility=hidden"]
EMU_LIBS = ["-ldl"]
#: set to 1 to build and load the emulator with gcov instrumentation (deep campaigns)
COVERAGE_VAR = "MDLRI_EMU_COVERAGE"
COVERAGE_FLAGS = ["--coverage"]


class BuildError(RuntimeError):
    """The emulator cannot be built; the message is one line saying what to do (no compiler
    output beyond its first error line, never a traceback)."""


class CompilerNotFound(BuildError):
    """``$CC`` (default ``gcc``) is not on PATH or cannot be run."""


class CompileFailed(BuildError):
    """The compiler rejected the sources; ``log`` holds its full output."""

    def __init__(self, message: str, log: Path | None) -> None:
        super().__init__(message)
        self.log = log


class CacheNotWritable(BuildError):
    """The cache directory cannot be created or written."""


def compiler() -> list[str]:
    """The compiler command: ``$CC`` split like a shell word list (``ccache gcc`` works), else
    ``gcc``; raises :class:`CompilerNotFound` when its program is not on PATH."""
    raw = os.environ.get("CC", "").strip()
    try:
        argv = shlex.split(raw) if raw else ["gcc"]
    except ValueError as exc:
        raise CompilerNotFound(f"CC={raw!r} cannot be parsed ({exc}): set CC to a C compiler "
                               "such as gcc") from None
    if not argv or shutil.which(argv[0]) is None:
        if raw:
            raise CompilerNotFound(f"C compiler CC={raw!r} not found: install it or set CC to "
                                   "a C compiler such as gcc")
        raise CompilerNotFound("gcc not found: install gcc or set CC")
    return argv


def _sources() -> list[Path]:
    files = sorted(EMU_INCLUDE.glob("*.h")) + sorted(EMU_SRC.glob("*.[ch]"))
    files += sorted(KERNEL_DIR.glob("*.[ch]"))
    return files


def _digest(cc: tuple[str, ...]) -> str:
    h = hashlib.sha256()
    for f in [*_sources(), Path(__file__).resolve()]:
        h.update("/".join(f.parts[-2:]).encode())  # folder/name: the same installed or not
        h.update(b"\0")
        h.update(f.read_bytes())
    h.update(" ".join([*cc, *CFLAGS, *EMU_LIBS]).encode())
    h.update(_compiler_version(cc).encode())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def _compiler_version(cc: tuple[str, ...]) -> str:
    try:
        return subprocess.run([*cc, "--version"], capture_output=True, text=True,
                              check=False).stdout
    except OSError as exc:
        raise CompilerNotFound(f"cannot run the C compiler {cc[0]} ({exc.strerror or exc}): "
                               "install gcc or set CC") from None


def cache_base() -> Path:
    """``$MDLRI_CACHE_DIR``, else ``~/.cache/mdlri-conformance``."""
    base = os.environ.get(CACHE_VAR)
    return Path(base).expanduser() if base else Path.home() / ".cache" / "mdlri-conformance"


def cache_dir() -> Path:
    """The folder holding this source version's libraries (created on demand)."""
    return cache_base() / f"emulator-{_digest(tuple(compiler()))}"


def _not_writable(where: Path, exc: OSError) -> CacheNotWritable:
    return CacheNotWritable(f"cache directory {where} is not writable "
                            f"({exc.strerror or type(exc).__name__}): set {CACHE_VAR} to a "
                            "writable directory")


def first_error_line(output: str) -> str:
    """The compiler's first line that names an error (else its first line), trimmed."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    hit = next((ln for ln in lines if re.search(r"\berror\b", ln, re.IGNORECASE)), None)
    line = hit or (lines[0] if lines else "no output")
    return line if len(line) <= 240 else line[:237] + "..."


def _write_log(out_dir: Path, name: str, cmd: list[str],
               proc: subprocess.CompletedProcess[str]) -> Path | None:
    log = out_dir / f"build-{name}.log"
    try:
        log.write_text(f"$ {shlex.join(cmd)}\n# exit status {proc.returncode}\n"
                       f"{proc.stdout}{proc.stderr}")
    except OSError:
        return None
    return log


def _run_compiler(cmd: list[str], out_dir: Path, name: str) -> None:
    """Run one compiler command; a refusal is a :class:`CompileFailed` with its log."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompilerNotFound(f"cannot run the C compiler {cmd[0]} "
                               f"({exc.strerror or exc}): install gcc or set CC") from None
    if proc.returncode != 0:
        log = _write_log(out_dir, name, cmd, proc)
        where = f"full log: {log}" if log else "no log: the cache is not writable"
        raise CompileFailed(f"{cmd[0]} failed building {name}: "
                            f"{first_error_line(proc.stderr or proc.stdout)} ({where})", log)


def _build(name: str, sources: list[Path], extra: list[str]) -> Path:
    cc = compiler()
    out_dir = cache_dir()
    target = out_dir / name
    if target.is_file():
        return target
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
        os.close(fd)
    except OSError as exc:
        raise _not_writable(out_dir.parent, exc) from None
    cmd = [*cc, *CFLAGS, *extra, "-o", tmp, *map(str, sources)]
    try:
        _run_compiler(cmd, out_dir, name)
        try:
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)  # atomic: a concurrent builder's identical file may win
        except OSError as exc:
            raise _not_writable(out_dir, exc) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


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
    return cache_base() / f"emulator-{_digest(tuple(compiler()))}-coverage"


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
        raise _not_writable(final.parent, exc) from None
    try:
        objects = []
        compile_flags = [f for f in CFLAGS if f != "-shared"]
        logs = final.parent  # a failed build's log outlives its temporary folder
        for src in sorted(EMU_SRC.glob("*.c")):
            obj = work / "obj" / f"{src.stem}.o"
            _run_compiler([*cc, *compile_flags, *COVERAGE_FLAGS, f"-I{EMU_INCLUDE}",
                           f"-I{EMU_SRC}", "-c", "-o", str(obj), str(src)], logs, EMULATOR_NAME)
            objects.append(str(obj))
        _run_compiler([*cc, *CFLAGS, *COVERAGE_FLAGS, "-o", str(work / EMULATOR_NAME),
                       *objects, *EMU_LIBS], logs, EMULATOR_NAME)
        try:
            os.rename(work, final)
        except OSError:  # a concurrent builder's identical folder won, or the cache is odd
            if not target.is_file():
                raise _not_writable(final.parent, OSError("rename failed")) from None
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def kernel_library() -> Path:
    """Path of ``libmdlri_host_kernels.so`` (the catalog's kernels as host C)."""
    return _build(KERNELS_NAME, sorted(KERNEL_DIR.glob("*.c")), [f"-I{KERNEL_DIR}"])


def main() -> int:
    try:
        print(emulator_library())
        print(kernel_library())
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
