"""The ``acl`` backend: the suite's contract over CANN's ``libacl_rt.so`` through ctypes.

``backends.acl.create(lib=None, device=0, kernel_binary=None, emulator=None)``:

* ``lib``: a library path or directory, or ``"emulator"`` (the host ABI emulator of
  ``backends/acl/emulator``, built on demand with gcc); default: ``MDLRI_ACL_LIB``, then the
  discovery of :mod:`backends.acl.library`;
* ``device``: the physical device id this backend binds (``--devices`` picks it per worker);
* ``kernel_binary``: the catalog kernels' binary; default ``MDLRI_KERNEL_BINARY``, then the
  emulator's host kernel library, or on hardware the fatbin in the kernels cache
  (:func:`default_kernel_binary`);
* ``emulator``: force (True) or forbid (False) the emulator; default: what ``lib`` says;
* ``faults``: names of :data:`backends.sim.faults.EMULATOR_FAULTS` (``--fault``) to inject
  into the emulator: put into ``MDLRI_EMU_FAULTS`` before the library is loaded (it reads the
  variable once, at load), so one process holds one fault set.

Without a usable library the backend still loads: it declares no capabilities and carries
a one-line reason (:meth:`AclBackend.unsupported_reason`), so every spec is UNSUPPORTED
with it; nothing crashes, nothing silently passes.

Modules: :mod:`.structs` (ctypes layouts), :mod:`.library` (discovery, preloading),
:mod:`.symbols` (lazy typed symbol table), :mod:`.convert` (handles, sentinels, task
params), :mod:`.backend` (:class:`AclBackend`), :mod:`.probe` (the doctor's subprocess probe).
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path
from typing import Any, Iterable

from .backend import AclBackend, AclRc
from .library import EMULATOR, Discovery, LibraryNotFound, find_library, load

#: where built artefacts are cached (kernels per SoC)
CACHE_VAR = "MDLRI_CACHE_DIR"
KERNEL_VAR = "MDLRI_KERNEL_BINARY"
#: file name of the catalog kernels' fatbin in the kernels cache
KERNEL_FATBIN = "mdlri_kernels.o"

_loaded: dict[str, ctypes.CDLL] = {}


def cache_root() -> Path:
    """``$MDLRI_CACHE_DIR``, else ``~/.cache/mdlri-conformance`` (shared with the emulator
    build)."""
    if os.environ.get(CACHE_VAR):
        return Path(os.environ[CACHE_VAR]).expanduser()
    return Path.home() / ".cache" / "mdlri-conformance"


def default_kernel_binary(soc: str | None) -> Path:
    """Where ``mdlri-conformance kernels build`` leaves the fatbin for SoC ``soc``."""
    return cache_root() / "kernels" / (soc or "unknown-soc") / KERNEL_FATBIN


def _emulator_paths() -> tuple[Path, Path]:
    """Build (if needed) the emulator and its host kernel library; their paths."""
    from .emulator import build
    return Path(build.emulator_library()), Path(build.kernel_library())


def _open(path: Path) -> ctypes.CDLL:
    key = str(path)
    if key not in _loaded:
        _loaded[key] = load(path)
    return _loaded[key]


def resolve(lib: str | os.PathLike[str] | None = None,
            emulator: bool | None = None) -> tuple[Discovery, str]:
    """Discovery result and a one-line reason ('' when a library was found)."""
    if emulator:
        return Discovery(None, "emulator=True", [], emulator=True), ""
    d = find_library(lib)
    if d.emulator and emulator is False:
        return Discovery(None), "the ACL emulator was requested but emulator=False"
    return d, d.reason


def availability(lib: str | os.PathLike[str] | None = None,
                 emulator: bool | None = None) -> str | None:
    """None when a library is found and loads (the emulator is built), else the reason.

    Runs no ACL function (``aclInit`` works once per process)."""
    d, reason = resolve(lib, emulator)
    if reason:
        return reason
    try:
        path = _emulator_paths()[0] if d.emulator else d.path
        assert path is not None
        _open(path)
    except LibraryNotFound as exc:
        return str(exc)
    except Exception as exc:  # emulator build failures: gcc missing, compile errors
        return f"cannot build the ACL emulator: {type(exc).__name__}: {exc}"
    return None


def _set_emulator_faults(faults: Iterable[str], path: Path) -> str:
    """Export the fault list for the emulator (issue 6); '' or why it cannot be applied."""
    from backends.sim.faults import EMU_ENV, EMULATOR_FAULTS, UnknownFault, check
    try:
        names = ",".join(sorted(check(faults, EMULATOR_FAULTS)))
    except UnknownFault as exc:
        return str(exc)
    if str(path) in _loaded and os.environ.get(EMU_ENV, "") != names:
        return (f"the emulator is already loaded in this process with faults "
                f"{os.environ.get(EMU_ENV, '') or 'none'!r}; start a new process for {names!r}")
    os.environ[EMU_ENV] = names
    return ""


def create(lib: str | os.PathLike[str] | None = None, device: int | str = 0,
           kernel_binary: str | os.PathLike[str] | None = None,
           emulator: bool | None = None, faults: Iterable[str] = ()) -> AclBackend:
    """The ``acl`` backend (see the module docstring); never raises for a missing library."""
    d, reason = resolve(lib, emulator)
    faults = list(faults or ())
    if not reason and faults and not d.emulator:
        reason = "injected faults (--fault) need the emulator (--acl-lib emulator)"
    if reason:
        return AclBackend(None, device=int(device), unavailable=reason)
    kernels: Path | None = None
    try:
        if d.emulator:
            path, kernels = _emulator_paths()
            why = _set_emulator_faults(faults, path) if faults else ""
            if why:
                return AclBackend(None, device=int(device), unavailable=why)
        else:
            assert d.path is not None
            path = d.path
        cdll = _open(path)
    except LibraryNotFound as exc:
        return AclBackend(None, device=int(device), unavailable=str(exc))
    except Exception as exc:
        return AclBackend(None, device=int(device),
                          unavailable=f"cannot build the ACL emulator: {type(exc).__name__}: "
                                      f"{exc}")
    explicit = kernel_binary or os.environ.get(KERNEL_VAR)
    backend = AclBackend(cdll, lib_path=path, device=int(device),
                         kernel_binary=str(explicit or kernels or ""), emulator=d.emulator)
    if not backend.kernel_binary_path() and not d.emulator:
        backend._kernel_binary = str(default_kernel_binary(backend.soc_name()))
        backend.capabilities = backend._detect_capabilities()
    return backend


__all__ = ["AclBackend", "AclRc", "availability", "cache_root", "create",
           "default_kernel_binary", "find_library", "resolve"]
