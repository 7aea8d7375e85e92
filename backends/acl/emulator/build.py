"""Build the host ABI emulator and the host kernel library with gcc, cached by content.

``emulator_library()`` and ``kernel_library()`` return the paths of
``libmdlri_acl_emu.so`` and ``libmdlri_host_kernels.so`` in
``$MDLRI_CACHE_DIR/emulator-<hash>/`` (default base ``~/.cache/mdlri-conformance``), where
``<hash>`` covers every source and header, the compiler, the flags and this file. A library
is compiled only when missing: into a temporary file in the same folder, then renamed into
place, so concurrent builders (pytest-xdist workers) never see a half-written file.

``python -m backends.acl.emulator.build`` prints the two paths.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EMU_INCLUDE = HERE / "include"
EMU_SRC = HERE / "src"
KERNEL_DIR = REPO / "kernel" / "host"

EMULATOR_NAME = "libmdlri_acl_emu.so"
KERNELS_NAME = "libmdlri_host_kernels.so"

CFLAGS = ["-std=c11", "-O2", "-fPIC", "-shared", "-pthread", "-Wall", "-Werror",
          "-fvisibility=hidden"]
EMU_LIBS = ["-ldl"]


class BuildError(RuntimeError):
    """gcc failed; the message holds the command and gcc's stderr."""


def _compiler() -> str:
    cc = os.environ.get("CC", "gcc")
    if shutil.which(cc) is None:
        raise BuildError(f"C compiler {cc!r} not found: the acl emulator needs gcc on PATH")
    return cc


def _sources() -> list[Path]:
    files = sorted(EMU_INCLUDE.glob("*.h")) + sorted(EMU_SRC.glob("*.[ch]"))
    files += sorted(KERNEL_DIR.glob("*.[ch]"))
    return files


def _digest(cc: str) -> str:
    h = hashlib.sha256()
    for f in [*_sources(), Path(__file__).resolve()]:
        h.update(str(f.relative_to(REPO)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    h.update(" ".join([cc, *CFLAGS, *EMU_LIBS]).encode())
    h.update(_compiler_version(cc).encode())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def _compiler_version(cc: str) -> str:
    try:
        return subprocess.run([cc, "--version"], capture_output=True, text=True,
                              check=False).stdout
    except OSError as exc:
        raise BuildError(f"cannot run {cc}: {exc}") from exc


def cache_dir() -> Path:
    """The folder holding this source version's libraries (created on demand)."""
    base = os.environ.get("MDLRI_CACHE_DIR")
    root = Path(base).expanduser() if base else Path.home() / ".cache" / "mdlri-conformance"
    return root / f"emulator-{_digest(_compiler())}"


def _build(name: str, sources: list[Path], extra: list[str]) -> Path:
    out_dir = cache_dir()
    target = out_dir / name
    if target.is_file():
        return target
    out_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=out_dir)
    os.close(fd)
    cmd = [_compiler(), *CFLAGS, *extra, "-o", tmp, *map(str, sources)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise BuildError(f"building {name} failed (exit {proc.returncode})\n"
                             f"$ {' '.join(cmd)}\n{proc.stderr.strip()}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)  # atomic: a concurrent builder's identical file may win
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def emulator_library() -> Path:
    """Path of ``libmdlri_acl_emu.so``, compiled if this source version is not cached yet."""
    return _build(EMULATOR_NAME, sorted(EMU_SRC.glob("*.c")),
                  [f"-I{EMU_INCLUDE}", f"-I{EMU_SRC}", *EMU_LIBS])


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
