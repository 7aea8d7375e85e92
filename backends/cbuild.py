"""Compile a small C shared library with gcc, cached by content (a neutral helper: it belongs to
no implementation, so the virtual device can use it without depending on the emulator).

:func:`shared_library` puts ``<name>`` in ``$MDLRI_CACHE_DIR/<tag>-<hash>/`` (default base
``~/.cache/mdlri-conformance``), where ``<hash>`` covers the given sources and headers, the
compiler, its version, the flags and the caller's extra inputs. A library is compiled only when
missing: into a temporary file in the same folder, then renamed into place, so concurrent
builders (pytest-xdist workers) never see a half-written file.

The compiler is ``$CC`` (split like shell words, so ``CC="ccache gcc"`` works), else ``gcc``.
A failure raises a :class:`BuildError` whose message is one line saying what to do.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

#: environment variable naming the cache base directory
CACHE_VAR = "MDLRI_CACHE_DIR"

#: the flags every library gets
BASE_CFLAGS = ("-std=c11", "-O2", "-fPIC", "-shared", "-pthread", "-Wall", "-Werror",
               "-fvisibility=hidden")


class BuildError(RuntimeError):
    """The library cannot be built; the message is one line saying what to do."""


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
    """``$CC`` split like shell words, else ``gcc``; :class:`CompilerNotFound` when absent."""
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


def digest(inputs: Sequence[Path], cc: Sequence[str], flags: Sequence[str]) -> str:
    """16 hex digits over the inputs' folder/name and bytes, the command and the compiler."""
    h = hashlib.sha256()
    for f in inputs:
        h.update("/".join(f.parts[-2:]).encode())  # folder/name: the same installed or not
        h.update(b"\0")
        h.update(f.read_bytes())
    h.update(" ".join([*cc, *flags]).encode())
    h.update(_compiler_version(tuple(cc)).encode())
    return h.hexdigest()[:16]


def first_error_line(output: str) -> str:
    """The compiler's first line naming an error (else its first line), trimmed."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    hit = next((ln for ln in lines if re.search(r"\berror\b", ln, re.IGNORECASE)), None)
    line = hit or (lines[0] if lines else "no output")
    return line if len(line) <= 240 else line[:237] + "..."


def cache_not_writable(where: Path, exc: OSError) -> CacheNotWritable:
    """The one-line error for a cache folder ``where`` that cannot be created or written."""
    return CacheNotWritable(f"cache directory {where} is not writable "
                            f"({exc.strerror or type(exc).__name__}): set {CACHE_VAR} to a "
                            "writable directory")


def run_compiler(cmd: list[str], log_dir: Path, name: str) -> None:
    """Run one compiler command building ``name``; a refusal is a :class:`CompileFailed` whose
    full output is in ``<log_dir>/build-<name>.log`` (when that can be written)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise CompilerNotFound(f"cannot run the C compiler {cmd[0]} "
                               f"({exc.strerror or exc}): install gcc or set CC") from None
    if proc.returncode == 0:
        return
    log: Path | None = log_dir / f"build-{name}.log"
    try:
        log.write_text(f"$ {shlex.join(cmd)}\n# exit status {proc.returncode}\n"
                       f"{proc.stdout}{proc.stderr}")
    except OSError:
        log = None
    where = f"full log: {log}" if log else "no log: the cache is not writable"
    raise CompileFailed(f"{cmd[0]} failed building {name}: "
                        f"{first_error_line(proc.stderr or proc.stdout)} ({where})", log)


def build_into(out_dir: Path, name: str, cc: Sequence[str], sources: Sequence[Path], *,
               flags: Sequence[str] = (), libs: Sequence[str] = ()) -> Path:
    """Path of ``<out_dir>/<name>``, compiled with ``cc``, :data:`BASE_CFLAGS`, ``flags``,
    ``sources`` and ``libs`` (in that order) when missing: into a temporary file in
    ``out_dir``, then renamed into place."""
    target = out_dir / name
    if target.is_file():
        return target
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
        os.close(fd)
    except OSError as exc:
        raise cache_not_writable(out_dir.parent, exc) from None
    try:
        run_compiler([*cc, *BASE_CFLAGS, *flags, "-o", tmp, *map(str, sources), *libs],
                     out_dir, name)
        try:
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)  # atomic: a concurrent builder's identical file may win
        except OSError as exc:
            raise cache_not_writable(out_dir, exc) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def shared_library(tag: str, name: str, sources: Sequence[Path], *,
                   inputs: Sequence[Path] = (), flags: Sequence[str] = (),
                   libs: Sequence[str] = ()) -> Path:
    """Path of ``<cache>/<tag>-<hash>/<name>``, compiled from ``sources`` (plus ``flags`` and
    ``libs``) when this version is not cached yet; ``inputs`` are further files the hash covers
    (headers, the caller's own module)."""
    cc = compiler()
    all_flags = [*BASE_CFLAGS, *flags, *libs]
    out_dir = cache_base() / f"{tag}-{digest([*sources, *inputs], cc, all_flags)}"
    return build_into(out_dir, name, cc, sources, flags=flags, libs=libs)


def print_paths(*builders: Callable[[], Path]) -> int:
    """A build module's ``main``: print the path each builder returns; a :class:`BuildError`
    is its one line on stderr and exit status 1."""
    try:
        for build in builders:
            print(build())
    except BuildError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0
