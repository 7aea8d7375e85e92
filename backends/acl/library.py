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

A library named explicitly (``--acl-lib`` / ``MDLRI_ACL_LIB``) is never replaced by a
discovered one: a missing path, a directory without the library or a devlib stub gives
:attr:`Discovery.error` (one line naming the option and the path), which the backend raises as
a configuration error. :func:`check_shared_object` then rejects a file that is no ELF shared
library for this host without loading it, and :data:`REQUIRED_SYMBOLS` are the functions
without which a loaded library is not an ACL runtime (e.g. ``libm.so.6``).

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

from . import driver

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


#: what the backend cannot do without: aclInit and aclrtSetDevice (every backend binds a
#: device, AclBackend._init_runtime) and aclrtCreateStream (every spec needs a stream). A library
#: lacking one of them is not an ACL runtime; anything else missing only makes the specs that
#: need it UNSUPPORTED (an older CANN without the newer aclmdlRI* functions).
REQUIRED_SYMBOLS = ("aclInit", "aclrtSetDevice", "aclrtCreateStream")

#: ELF e_machine of each host architecture
_ELF_MACHINES = {"x86_64": 62, "aarch64": 183}
_ELF_TYPES = {1: "a relocatable object (.o)", 2: "an executable", 4: "a core dump"}


class LibraryNotFound(Exception):
    """No usable library; the message is the one-line reason."""


@dataclass
class Discovery:
    """The outcome of a search: the library path (or None), how it was found, what was tried.

    ``explicit`` is how the option that named the library reads in messages (``--acl-lib X``
    or ``MDLRI_ACL_LIB=X``, as typed; empty for discovery); ``error`` is set when that explicit
    value names no usable library."""

    path: Path | None
    source: str = ""
    tried: list[str] = field(default_factory=list)
    emulator: bool = False
    explicit: str = ""
    error: str = ""

    @property
    def reason(self) -> str:
        """One line saying why nothing was found (empty when something was)."""
        if self.path is not None or self.emulator:
            return ""
        if self.error:
            return self.error
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


def explicit_label(source: str, value: str) -> str:
    """How an explicit value is named in messages: ``--acl-lib X`` or ``MDLRI_ACL_LIB=X``."""
    return f"{source}={value}" if source == LIB_VAR else f"{source} {value}"


def _explicit(value: str, source: str, tried: list[str], arch: str) -> Discovery:
    p = Path(value).expanduser()
    label = explicit_label(source, value)

    def fail(what: str) -> Discovery:
        tried.append(f"{label}: {what}")
        return Discovery(None, "", tried, explicit=label, error=f"{label}: {what}")

    if p.is_dir():
        found = _pick([p] + lib_dirs(p, arch), tried)
        if found is not None:
            return Discovery(found, source, tried, explicit=label)
        return fail(f"no {' or '.join(LIB_NAMES)} in that directory (nor in its lib64/ or "
                    f"{arch}-linux/lib64/)")
    if is_stub(p):
        return fail("a link-only devlib stub, not the runtime library")
    if p.is_file():
        return Discovery(p.resolve(), source, tried, explicit=label)
    if p.exists():
        return fail("not a regular file")
    if "/" not in value:
        return fail("no such file or directory (give the path of the library or of its "
                    "directory)")
    return fail("no such file or directory")


def check_shared_object(path: Path, arch: str | None = None) -> str:
    """'' when ``path`` is a 64-bit ELF shared object for this host, else what it is instead
    (read from its header; nothing is loaded)."""
    arch = arch or host_arch()
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if head[:4] != b"\x7fELF":
        kind = "a text file" if head and all(32 <= b < 127 or b in b"\t\r\n" for b in head) \
            else "not an ELF file"
        return f"not a shared library ({kind})"
    if len(head) < 20 or head[4] != 2:
        return "not a 64-bit shared library (32-bit or truncated ELF)"
    e_type, e_machine = struct.unpack_from("<HH" if head[5] == 1 else ">HH", head, 16)
    if e_type != 3:
        return f"not a shared library ({_ELF_TYPES.get(e_type, f'ELF type {e_type}')})"
    want = _ELF_MACHINES.get(arch)
    if want is not None and e_machine != want:
        return f"built for another architecture (ELF machine {e_machine}, this host is {arch})"
    if is_pie_executable(path):
        return "not a shared library (a position-independent executable)"
    return ""


def missing_required(lib: object) -> list[str]:
    """The :data:`REQUIRED_SYMBOLS` a loaded library (a ``ctypes.CDLL``) does not export."""
    return [n for n in REQUIRED_SYMBOLS if not hasattr(lib, n)]


def not_a_runtime(label: str, missing: Iterable[str]) -> str:
    """The one-line reason for a library that loads but lacks :data:`REQUIRED_SYMBOLS`."""
    return (f"{label}: not an ACL runtime library (it does not export "
            f"{', '.join(missing)}); name libacl_rt.so or libascendcl.so of a CANN install")


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
            return _explicit(str(value), source, tried, arch)
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


#: DT_FLAGS_1 and its DF_1_PIE bit (a position-independent executable, which dlopen refuses)
_DT_FLAGS_1, _DF_1_PIE = 0x6FFFFFFB, 0x08000000


def _dynamic(data: bytes) -> tuple[list[tuple[int, int]], list[tuple[int, int, int]]]:
    """The ``PT_DYNAMIC`` entries (tag, value) and the ``PT_LOAD`` segments (vaddr, offset,
    size) of a 64-bit little-endian ELF image (empty lists when it is none or malformed)."""
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        return [], []
    try:
        e_phoff, = struct.unpack_from("<Q", data, 0x20)
        e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
        loads: list[tuple[int, int, int]] = []
        dynamic: tuple[int, int] | None = None
        for i in range(e_phnum):
            off = e_phoff + i * e_phentsize
            p_type, _flags, p_offset, p_vaddr, _pa, p_filesz = struct.unpack_from(
                "<IIQQQQ", data, off)
            if p_type == 1:
                loads.append((p_vaddr, p_offset, p_filesz))
            elif p_type == 2:
                dynamic = (p_offset, p_filesz)
        entries: list[tuple[int, int]] = []
        if dynamic is not None:
            for j in range(dynamic[1] // 16):
                tag, val = struct.unpack_from("<qQ", data, dynamic[0] + 16 * j)
                if tag == 0:
                    break
                entries.append((tag, val))
        return entries, loads
    except struct.error:
        return [], []


def needed(path: Path) -> list[str]:
    """The ``DT_NEEDED`` sonames of a 64-bit little-endian ELF shared object ([] if unreadable)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return []
    entries, loads = _dynamic(data)
    names = [val for tag, val in entries if tag == 1]
    strtab = next((val for tag, val in entries if tag == 5), None)
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


def is_pie_executable(path: Path) -> bool:
    """Whether ``path`` is a position-independent executable (``DF_1_PIE``): ELF type
    ``ET_DYN`` like a library, but ``dlopen`` refuses it."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return False
    entries, _ = _dynamic(data)
    return any(tag == _DT_FLAGS_1 and val & _DF_1_PIE for tag, val in entries)


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
                         loader: Callable[[Path], None] = _dlopen_global,
                         skip: Iterable[str] = ()) -> list[str]:
    """Preload (``loader``: RTLD_GLOBAL by absolute path), deepest first, the DT_NEEDED
    libraries of ``lib`` found in ``dirs``, except the sonames in ``skip`` (and what only
    they need); returns one line per dependency that failed."""
    dirs = dependency_dirs(lib) if dirs is None else dirs
    failures: list[str] = []
    done: set[str] = set(skip)

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


class SecondEmulatorCopy(LibraryNotFound):
    """A second copy of the host ABI emulator in a process that holds one already; the
    message is one line naming both."""


#: the file name of the host ABI emulator (``emulator/build.py`` builds it under that name)
EMULATOR_FILE = "libmdlri_acl_emu.so"
#: the symbol only the emulator exports: how a loaded library is known to be a copy of it
EMULATOR_SYMBOL = "mdlriEmuVersion"
#: the real path of the emulator copy this process loaded through :func:`load`
_emulator_loaded: list[str] = []


def _mapped_emulators() -> list[str]:
    """The real paths of the emulator files (:data:`EMULATOR_FILE`) mapped into this process,
    whoever loaded them."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    paths = {ln.split(None, 5)[5].strip() for ln in maps.splitlines() if ln.count(" ") >= 5
             and ln.rstrip().endswith("/" + EMULATOR_FILE)}
    return sorted(os.path.realpath(p) for p in paths)


def _refuse_second_emulator(path: Path, loaded: bool) -> None:
    """Raise :class:`SecondEmulatorCopy` when this process holds an emulator copy other than
    ``path``. Two copies mapped RTLD_GLOBAL export the same symbols: the second one's calls
    into its own exported functions bind to the first one's, so its handles land in the
    first's state and the run fails later (a sync that times out) instead of loudly.
    ``loaded``: ``path`` is known to be an emulator (it exports :data:`EMULATOR_SYMBOL`);
    otherwise only a file named :data:`EMULATOR_FILE` is taken for one before loading."""
    real = os.path.realpath(path)
    if not loaded and Path(real).name != EMULATOR_FILE:
        return
    held = [p for p in dict.fromkeys([*_emulator_loaded, *_mapped_emulators()]) if p != real]
    if held:
        raise SecondEmulatorCopy(
            f"cannot load {path}: a second copy of the ACL emulator in this process, which "
            f"already holds {held[0]} (two copies share their exported symbols and fail "
            "later); use one emulator build per process (one MDLRI_CACHE_DIR, CC and "
            "MDLRI_EMU_COVERAGE) or a fresh process")


def load(path: Path) -> ctypes.CDLL:
    """Preload the dependencies, then open the library (raises LibraryNotFound with a line;
    :class:`SecondEmulatorCopy` for a second copy of the emulator in this process)."""
    _refuse_second_emulator(path, loaded=False)
    skip: list[str] = []
    try:
        if driver.virtual_device_wanted() and Path(os.path.realpath(path)).name != EMULATOR_FILE:
            driver.load_virtual_device()
            skip.append(driver.DRIVER_FILE)
    except driver.VirtualDeviceError as exc:
        raise LibraryNotFound(str(exc)) from None
    failures = preload_dependencies(path, skip=skip)
    try:
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        hint = ""
        if "libascend_hal" in str(exc):
            hint = " (CANN present, NPU driver absent)"
        extra = f"; dependency errors: {failures[0]}" if failures else ""
        raise LibraryNotFound(f"cannot load {path}: {exc}{hint}{extra}") from None
    if hasattr(lib, EMULATOR_SYMBOL):  # a copy under another name: mapped, never used
        _refuse_second_emulator(path, loaded=True)
        if os.path.realpath(path) not in _emulator_loaded:
            _emulator_loaded.append(os.path.realpath(path))
    return lib
