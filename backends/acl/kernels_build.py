"""``mdlri-conformance kernels build``: the catalog's Ascend C kernels (``kernel/ascendc/``)
built into the fatbin the ``acl`` backend loads on hardware.

What it needs, found the way CANN's ``set_sample_env.sh`` finds it (scenarios.md §2.3):

* a CANN root: ``ASCEND_HOME_PATH``, else ``ASCEND_INSTALL_PATH`` (``source set_env.sh``);
* ``ASCENDC_CMAKE_DIR`` (the directory holding ``ascendc.cmake``): the variable when it
  holds the file, else the first of ``<root>/<host-arch>-linux/tikcpp/ascendc_kernel_cmake``,
  the ``aarch64-linux`` and ``x86_64-linux`` equivalents, ``<root>/tikcpp/ascendc_kernel_cmake``
  and ``<root>/compiler/tikcpp/ascendc_kernel_cmake``;
* the SoC: ``--soc``, else ``SOC_VERSION``, else ``aclrtGetSocName()`` asked in a subprocess
  (no ``aclInit``) through the acl backend's library discovery;
* ``cmake`` on ``PATH``.

Anything missing raises :class:`CannMissing` with one line. Otherwise :func:`build` runs
``cmake`` configure / build / install in a temporary directory and copies
``<install>/fatbin/mdlri_kernels/mdlri_kernels.o`` to ``<output>/mdlri_kernels.o``, by default
the kernels cache path the backend expects (:func:`backends.acl.default_kernel_binary`).
"""

from __future__ import annotations

import importlib.resources
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from .library import host_arch

#: the Ascend C sources and their CMakeLists.txt
SOURCE_DIR = Path(str(importlib.resources.files("mdlri_conformance.kernel"))) / "ascendc"
#: the ascendc_fatbin_library target, hence ``out/fatbin/<target>/<target>.o``
TARGET = "mdlri_kernels"
#: CANN root variables, in order
ROOT_VARS = ("ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH")
#: a SoC name as set_sample_env.sh accepts it
SOC_RE = re.compile(r"^[A-Za-z0-9_-]+$")
#: the SoC probe's wall-clock limit
SOC_PROBE_TIMEOUT_S = 60

Runner = Callable[..., "subprocess.CompletedProcess[Any]"]


class CannMissing(Exception):
    """Something the build needs is absent; the message is one line saying what."""


class BuildFailed(Exception):
    """cmake ran and failed, or installed no fatbin; the message is one line."""


@dataclass(frozen=True)
class Toolchain:
    """What the build found: CANN root, ascendc.cmake's directory, SoC name, cmake."""

    root: Path
    cmake_dir: Path
    soc: str
    cmake: str = "cmake"


def cann_root(env: Mapping[str, str]) -> Path:
    """The CANN root from ``ASCEND_HOME_PATH`` / ``ASCEND_INSTALL_PATH``."""
    for var in ROOT_VARS:
        if env.get(var):
            return Path(env[var]).expanduser()
    raise CannMissing("CANN not found: neither ASCEND_HOME_PATH nor ASCEND_INSTALL_PATH is set "
                      "(source <install_root>/cann/set_env.sh)")


def cmake_dir_candidates(root: Path, arch: str | None = None) -> list[Path]:
    """Where ``ascendc.cmake`` is looked for below ``root``, in order."""
    arch = arch or host_arch()
    archs = [arch] + [a for a in ("aarch64", "x86_64") if a != arch]
    dirs = [root / f"{a}-linux" / "tikcpp" / "ascendc_kernel_cmake" for a in archs]
    return dirs + [root / "tikcpp" / "ascendc_kernel_cmake",
                   root / "compiler" / "tikcpp" / "ascendc_kernel_cmake"]


def find_cmake_dir(root: Path, env: Mapping[str, str], arch: str | None = None) -> Path:
    """``ASCENDC_CMAKE_DIR`` when it holds ``ascendc.cmake``, else the first candidate that
    does."""
    given = env.get("ASCENDC_CMAKE_DIR")
    if given:
        p = Path(given).expanduser()
        if (p / "ascendc.cmake").is_file():
            return p
        raise CannMissing(f"ASCENDC_CMAKE_DIR={given} holds no ascendc.cmake")
    for d in cmake_dir_candidates(root, arch):
        if (d / "ascendc.cmake").is_file():
            return d
    raise CannMissing(f"no ascendc.cmake under {root} (tikcpp/ascendc_kernel_cmake); "
                      "set ASCENDC_CMAKE_DIR")


def probe_soc(env: Mapping[str, str], runner: Runner = subprocess.run) -> str | None:
    """``aclrtGetSocName()`` of the discovered library, asked in a subprocess; None if no
    library is found or it answers nothing usable."""
    cmd = [sys.executable, "-m", "mdlri_conformance.backends.acl.kernels_build", "--print-soc"]
    try:
        res = runner(cmd, capture_output=True, text=True, timeout=SOC_PROBE_TIMEOUT_S,
                     cwd=str(SOURCE_DIR.parents[1]), env=dict(env))
    except (OSError, subprocess.TimeoutExpired):
        return None
    if res.returncode != 0:
        return None
    for line in str(res.stdout).splitlines():
        if SOC_RE.match(line.strip()):
            return line.strip()
    return None


def find_soc(explicit: str | None, env: Mapping[str, str],
             probe: Callable[[Mapping[str, str]], str | None] = probe_soc) -> str:
    """``--soc``, else ``SOC_VERSION``, else :func:`probe_soc`."""
    for source, value in (("--soc", explicit), ("SOC_VERSION", env.get("SOC_VERSION"))):
        if value:
            if not SOC_RE.match(value):
                raise CannMissing(f"{source}={value!r} is not a SoC name (e.g. Ascend910B3)")
            return value
    soc = probe(env)
    if not soc:
        raise CannMissing("SoC unknown: aclrtGetSocName gave nothing (no usable libacl_rt.so "
                          "or no NPU); pass --soc NAME or set SOC_VERSION")
    return soc


def find_toolchain(soc: str | None = None, env: Mapping[str, str] | None = None,
                   arch: str | None = None,
                   probe: Callable[[Mapping[str, str]], str | None] = probe_soc,
                   which: Callable[[str], str | None] = shutil.which) -> Toolchain:
    """Everything the build needs, or :class:`CannMissing` naming the first thing missing."""
    env = os.environ if env is None else env
    root = cann_root(env)
    cmake_dir = find_cmake_dir(root, env, arch)
    cmake = which("cmake")
    if not cmake:
        raise CannMissing("cmake not found on PATH (CMake 3.16 or later is needed)")
    return Toolchain(root, cmake_dir, find_soc(soc, env, probe), cmake)


def cmake_commands(tc: Toolchain, build_dir: Path, install_dir: Path,
                   source_dir: Path = SOURCE_DIR) -> list[list[str]]:
    """The configure, build and install command lines."""
    return [
        [tc.cmake, "-S", str(source_dir), "-B", str(build_dir),
         f"-DSOC_VERSION={tc.soc}", f"-DASCENDC_CMAKE_DIR={tc.cmake_dir}",
         f"-DASCEND_CANN_PACKAGE_PATH={tc.root}", f"-DCMAKE_INSTALL_PREFIX={install_dir}"],
        [tc.cmake, "--build", str(build_dir), "-j"],
        [tc.cmake, "--install", str(build_dir)],
    ]


def build_env(tc: Toolchain, env: Mapping[str, str]) -> dict[str, str]:
    """The environment cmake runs in: ``env`` plus the variables the CANN examples export."""
    out = dict(env)
    out.update(SOC_VERSION=tc.soc, ASCENDC_CMAKE_DIR=str(tc.cmake_dir),
               ASCEND_HOME_PATH=str(tc.root), ASCEND_INSTALL_PATH=str(tc.root))
    return out


def installed_fatbin(install_dir: Path, build_dir: Path) -> Path | None:
    """``<install>/fatbin/<target>/<target>.o``, else any ``<target>.o`` below either dir."""
    expected = install_dir / "fatbin" / TARGET / f"{TARGET}.o"
    if expected.is_file():
        return expected
    for d in (install_dir, build_dir):
        hits = sorted(d.rglob(f"{TARGET}.o")) if d.is_dir() else []
        if hits:
            return hits[0]
    return None


def build(soc: str | None = None, output: str | os.PathLike[str] | None = None,
          env: Mapping[str, str] | None = None, runner: Runner = subprocess.run,
          toolchain: Toolchain | None = None, log: Any = None) -> Path:
    """Build the fatbin and copy it to ``<output>/mdlri_kernels.o`` (default: the kernels
    cache of the SoC); returns that path. cmake's output goes to ``log`` (default stderr)."""
    from . import KERNEL_FATBIN, default_kernel_binary
    env = os.environ if env is None else env
    tc = toolchain or find_toolchain(soc, env)
    dest = (Path(output).expanduser() / KERNEL_FATBIN if output
            else default_kernel_binary(tc.soc))
    log = sys.stderr if log is None else log
    with tempfile.TemporaryDirectory(prefix="mdlri-kernels-") as tmp:
        build_dir, install_dir = Path(tmp) / "build", Path(tmp) / "out"
        for cmd in cmake_commands(tc, build_dir, install_dir):
            res = runner(cmd, env=build_env(tc, env), stdout=log, stderr=log)
            if res.returncode != 0:
                raise BuildFailed(f"`{' '.join(cmd[:2])} …` failed with exit status "
                                  f"{res.returncode} (its output is above)")
        fatbin = installed_fatbin(install_dir, build_dir)
        if fatbin is None:
            raise BuildFailed(f"cmake succeeded but installed no {TARGET}.o under {install_dir}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fatbin, dest)
    return dest


def print_soc() -> int:
    """Subprocess side of :func:`probe_soc`: print ``aclrtGetSocName()`` (no ``aclInit``)."""
    import ctypes

    from .library import find_library, load
    d = find_library()
    if d.path is None:
        print(d.reason or "the ACL emulator has no SoC to build for", file=sys.stderr)
        return 1
    lib = load(d.path)
    fn = getattr(lib, "aclrtGetSocName", None)
    if fn is None:
        print("aclrtGetSocName is absent", file=sys.stderr)
        return 1
    fn.restype, fn.argtypes = ctypes.c_char_p, []
    raw = fn()
    if not raw:
        print("aclrtGetSocName returned NULL", file=sys.stderr)
        return 1
    print(raw.decode(errors="replace"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m backends.acl.kernels_build --print-soc`` (used by :func:`probe_soc`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--print-soc"]:
        return print_soc()
    print("usage: python -m backends.acl.kernels_build --print-soc", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
