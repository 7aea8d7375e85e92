"""Finding and loading the ACL runtime library (shared/ref/ecosystem.md §1.3-§1.4).

Search order, first hit wins:

1. an explicit path (``--acl-lib PATH``), then ``MDLRI_ACL_LIB``: a file, or a directory
   searched like a lib dir below; the word ``emulator`` selects the host ABI emulator;
2. ``ASCEND_HOME_PATH``, ``ASCEND_INSTALL_PATH``, ``ASCEND_TOOLKIT_HOME`` (what CANN's
   ``set_env.sh`` exports) as install roots;
3. the directories of ``LD_LIBRARY_PATH`` (the documented happy path: source set_env.sh);
4. the usual install roots: ``$HOME/Ascend/cann``, ``$HOME/Ascend/ascend-toolkit/latest``,
   ``/usr/local/Ascend/cann``, ``/usr/local/Ascend/ascend-toolkit/latest``, ``/opt/Ascend/cann``.

Per root the lib dirs are ``<root>/lib64`` and ``<root>/<arch>-linux/lib64``; per root
``libacl_rt.so`` is preferred to the legacy ``libascendcl.so`` in any of its dirs. The
link-only stubs with the same names (``<arch>-linux/devlib/...``, ``.../stub/...``) are
never taken, not even when given explicitly.

Loading: ``LD_LIBRARY_PATH`` set from inside Python does not reach ``dlopen`` (glibc reads
it once), so the dependencies listed in the library's ``DT_NEEDED`` entries that sit next
to it (or in another CANN lib dir or the driver dirs) are preloaded by absolute path with
``RTLD_GLOBAL``, deepest first, before the library itself.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

#: library names, preferred first (abi.md §0)
LIB_NAMES = ("libacl_rt.so", "libascendcl.so")
#: environment variables naming an install root, in order
ROOT_VARS = ("ASCEND_HOME_PATH", "ASCEND_INSTALL_PATH", "ASCEND_TOOLKIT_HOME")
#: environment variable naming the library explicitly
LIB_VAR = "MDLRI_ACL_LIB"
#: the value of --acl-lib / MDLRI_ACL_LIB that selects the host ABI emulator
EMULATOR = "emulator"
#: default install roots below ``/`` and below ``$HOME`` (ecosystem.md §1.4 item 3)
HOME_ROOTS = ("Ascend/cann", "Ascend/ascend-toolkit/latest")
SYSTEM_ROOTS = ("usr/local/Ascend/cann", "usr/local/Ascend/ascend-toolkit/latest",
                "opt/Ascend/cann")
#: driver library dirs below the driver root (default /usr/local/Ascend)
DRIVER_SUBDIRS = ("driver/lib64/driver", "driver/lib64/common", "driver/lib64")


class LibraryNotFound(Exception):
    """No usable library; the message is the one-line reason."""


@dataclass
class Discovery:
    """The outcome of a search: the library path (or None), how it was found, what was tried."""

    path: Path | None
    source: str = ""
    tried: list[str] = field(default_factory=list)
    emulator: bool = False

    @property
    def reason(self) -> str:
        """One line saying why nothing was found (empty when something was)."""
        if self.path is not None or self.emulator:
            return ""
        if any(t.startswith("explicit") for t in self.tried):
            return self.tried[-1]
        return ("no CANN runtime library (libacl_rt.so / libascendcl.so) found; set "
                "ASCEND_HOME_PATH (source CANN's set_env.sh), --acl-lib PATH or "
                f"{LIB_VAR}, or use --acl-lib emulator")


def host_arch() -> str:
    """``x86_64`` or ``aarch64`` (the ``<arch>-linux`` directory name)."""
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def is_stub(path: Path) -> bool:
    """A link-only stub copy (``devlib`` or ``stub`` directories) that must never be loaded."""
    parts = {p.lower() for p in Path(path).parts[:-1]}
    return "devlib" in parts or "stub" in parts or "stubs" in parts


def lib_dirs(root: Path, arch: str) -> list[Path]:
    """The lib dirs of an install root, in search order."""
    return [root / "lib64", root / f"{arch}-linux" / "lib64"]


def _pick(dirs: Iterable[Path], tried: list[str]) -> Path | None:
    """The first existing non-stub library in ``dirs``, libacl_rt.so before libascendcl.so."""
    dirs = list(dirs)
    for name in LIB_NAMES:
        for d in dirs:
            p = d / name
            if is_stub(p):
                tried.append(f"{p} (stub, skipped)")
                continue
            if p.is_file():
                return p
            tried.append(str(p))
    return None


def _explicit(value: str, tried: list[str], arch: str) -> Discovery:
    p = Path(value).expanduser()
    if p.is_dir():
        found = _pick([p] + lib_dirs(p, arch), tried)
        if found is not None:
            return Discovery(found, "explicit", tried)
        tried.append(f"explicit {value}: no {' or '.join(LIB_NAMES)} in that directory")
        return Discovery(None, "", tried)
    if is_stub(p):
        tried.append(f"explicit {value}: a link-only devlib stub, not the runtime library")
        return Discovery(None, "", tried)
    if p.is_file():
        return Discovery(p.resolve(), "explicit", tried)
    tried.append(f"explicit {value}: no such file")
    return Discovery(None, "", tried)


def find_library(explicit: str | os.PathLike[str] | None = None, *,
                 env: Mapping[str, str] | None = None, home: Path | None = None,
                 sysroot: Path = Path("/"), arch: str | None = None) -> Discovery:
    """Search for the runtime library (see the module docstring for the order).

    ``env``, ``home``, ``sysroot`` and ``arch`` exist so tests can point the search at a
    fake tree; they default to the real environment.
    """
    env = os.environ if env is None else env
    arch = arch or host_arch()
    tried: list[str] = []
    for source, value in (("--acl-lib", explicit), (LIB_VAR, env.get(LIB_VAR))):
        if value:
            if str(value) == EMULATOR:
                return Discovery(None, f"{source}=emulator", tried, emulator=True)
            found = _explicit(str(value), tried, arch)
            found.source = source if found.path else ""
            return found
    for var in ROOT_VARS:
        if env.get(var):
            hit = _pick(lib_dirs(Path(env[var]), arch), tried)
            if hit:
                return Discovery(hit, f"${var}", tried)
    ld_dirs = [Path(d) for d in env.get("LD_LIBRARY_PATH", "").split(":") if d]
    hit = _pick([d for d in ld_dirs if not is_stub(d / "x")], tried)
    if hit:
        return Discovery(hit, "$LD_LIBRARY_PATH", tried)
    home = home if home is not None else Path(env.get("HOME", str(Path.home())))
    roots = [home / r for r in HOME_ROOTS] + [sysroot / r for r in SYSTEM_ROOTS]
    for root in roots:
        hit = _pick(lib_dirs(root, arch), tried)
        if hit:
            return Discovery(hit, f"install root {root}", tried)
    return Discovery(None, "", tried)


# ---------------------------------------------------------------------------------------------
# dependencies


def needed(path: Path) -> list[str]:
    """The ``DT_NEEDED`` sonames of a 64-bit little-endian ELF shared object ([] if unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    e_phoff, = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    loads: list[tuple[int, int, int]] = []
    dynamic: tuple[int, int] | None = None
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        p_type, _flags, p_offset, p_vaddr, _pa, p_filesz = struct.unpack_from("<IIQQQQ", data, off)
        if p_type == 1:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return []
    strtab = None
    names: list[int] = []
    for j in range(dynamic[1] // 16):
        tag, val = struct.unpack_from("<qQ", data, dynamic[0] + 16 * j)
        if tag == 0:
            break
        if tag == 1:
            names.append(val)
        elif tag == 5:
            strtab = val
    if strtab is None:
        return []
    base = next((off + strtab - va for va, off, sz in loads if va <= strtab < va + sz), None)
    if base is None:
        return []
    out = []
    for n in names:
        end = data.find(b"\0", base + n)
        out.append(data[base + n:end].decode(errors="replace"))
    return out


def driver_dirs(env: Mapping[str, str] | None = None, sysroot: Path = Path("/")) -> list[Path]:
    """Driver library dirs: from /etc/ascend_install.info, else below /usr/local/Ascend."""
    env = os.environ if env is None else env
    roots: list[Path] = []
    info = sysroot / "etc" / "ascend_install.info"
    try:
        for line in info.read_text(errors="replace").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "Driver_Install_Path_Param" and value.strip():
                roots.append(Path(value.strip().strip('"')))
    except OSError:
        pass
    roots.append(sysroot / "usr/local/Ascend")
    return [r / sub for r in roots for sub in DRIVER_SUBDIRS]


def dependency_dirs(lib: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Where the library's dependencies are looked for: its own dir, sibling CANN lib dirs,
    then the driver dirs."""
    env = os.environ if env is None else env
    d = lib.parent
    dirs = [d, d.parent / "lib64", d.parent.parent / "lib64"]
    dirs += [Path(env[v]) / "lib64" for v in ROOT_VARS if env.get(v)]
    dirs += driver_dirs(env)
    seen: list[Path] = []
    for x in dirs:
        if x not in seen and x.is_dir() and not is_stub(x / "x"):
            seen.append(x)
    return seen


def _dlopen_global(path: Path) -> None:
    ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)


def preload_dependencies(lib: Path, dirs: list[Path] | None = None,
                         loader: Callable[[Path], None] = _dlopen_global) -> list[str]:
    """Preload (``loader``: RTLD_GLOBAL by absolute path), deepest first, the DT_NEEDED
    libraries of ``lib`` found in ``dirs``; returns one line per dependency that failed."""
    dirs = dependency_dirs(lib) if dirs is None else dirs
    failures: list[str] = []
    done: set[str] = set()

    def visit(path: Path) -> None:
        for soname in needed(path):
            if soname in done:
                continue
            done.add(soname)
            dep = next((d / soname for d in dirs if (d / soname).is_file()), None)
            if dep is None:
                continue  # a system library (libc, libstdc++): the loader finds it
            visit(dep)
            try:
                loader(dep)
            except OSError as exc:
                failures.append(f"{dep}: {exc}")

    visit(lib)
    return failures


def load(path: Path) -> ctypes.CDLL:
    """Preload the dependencies, then open the library (raises LibraryNotFound with a line)."""
    failures = preload_dependencies(path)
    try:
        return ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        hint = ""
        if "libascend_hal" in str(exc):
            hint = " (CANN present, NPU driver absent)"
        extra = f"; dependency errors: {failures[0]}" if failures else ""
        raise LibraryNotFound(f"cannot load {path}: {exc}{hint}{extra}") from None
