"""The ``acl`` backend: the suite's contract over CANN's ``libacl_rt.so`` through ctypes.

``backends.acl.create(lib=None, device=0, kernel_binary=None, emulator=None, faults=())``:

* ``lib``: a library path or directory, or ``"emulator"`` (the host ABI emulator of
  ``backends/acl/emulator``, built on demand with gcc); default: ``MDLRI_ACL_LIB``, then the
  discovery of :mod:`backends.acl.library`;
* ``device``: the physical device id this backend binds (``--devices`` picks it per worker);
* ``kernel_binary``: the catalog kernels' binary; default ``MDLRI_KERNEL_BINARY``, then the
  emulator's host kernel library, or on hardware the fatbin in the kernels cache
  (:func:`default_kernel_binary`);
* ``emulator``: force (True) or forbid (False) the emulator; default: what ``lib`` says;
* ``faults``: names of :data:`backends.acl.emulator_faults.EMULATOR_FAULTS` (``--fault``) to inject
  into the emulator: put into ``MDLRI_EMU_FAULTS`` before the library is loaded (it reads the
  variable once, at load), so one process holds one fault set.

Bad input raises :class:`~backends.contract.BackendConfigError` (one line naming the option,
the path and what is wrong; the suite exits 2): a library named explicitly (``lib`` or
``MDLRI_ACL_LIB``) that does not exist, is no shared library for this host, is a directory
without ``libacl_rt.so`` / ``libascendcl.so``, or loads but lacks
:data:`~.library.REQUIRED_SYMBOLS` (e.g. ``libm.so.6``); an explicit kernel binary that does
not exist; a device id the runtime does not have; faults without the emulator, or faults
other than those the emulator was already loaded with in this process.

A backend that loads but cannot run does not raise: without a library found by discovery
(nothing named), or when the emulator cannot be built, it declares no capabilities and
carries a one-line reason (:meth:`AclBackend.unsupported_reason`) saying what to do; every
spec is then UNSUPPORTED with it and the run tests nothing.

:func:`preflight` makes the same checks before any process loads the runtime, reading the
device count in a subprocess (``aclInit`` works once per process).

Modules: :mod:`.structs` (ctypes layouts), :mod:`.library` (discovery, preloading),
:mod:`.symbols` (lazy typed symbol table), :mod:`.convert` (handles, sentinels, task
params), :mod:`.backend` (:class:`AclBackend`), :mod:`.probe` (the doctor's subprocess probe).
"""

from __future__ import annotations

import ctypes
import os
from ctypes import byref, c_uint32
from pathlib import Path
from typing import Any, Iterable, Sequence

from mdlri_conformance.backends import kernel_layouts
from mdlri_conformance.backends.contract import BackendConfigError

from . import driver
from .backend import AclBackend, AclRc
# one module object for both raising and recognising BuildError: a lazy import per call can
# meet a re-imported copy (a test runner that restores sys.modules), whose classes differ
from .emulator import build as emulator_build
from .library import (Discovery, LibraryNotFound, SecondEmulatorCopy, check_shared_object,
                      find_library, load, missing_required, not_a_runtime)
from .paths import CACHE_VAR, KERNEL_FATBIN, cache_root, default_kernel_binary

KERNEL_VAR = "MDLRI_KERNEL_BINARY"
#: the emulator's device count override (backends/acl/emulator/src/core.c device_count)
EMU_DEVICE_VAR = "MDLRI_EMU_DEVICE_COUNT"
#: the preflight's device-count subprocess gives up after this long (then the run goes on and
#: the workers meet whatever hangs)
PREFLIGHT_TIMEOUT_S = 60.0

_loaded: dict[str, ctypes.CDLL] = {}
#: the MDLRI_EMU_FAULTS value each emulator library was loaded with in this process
_loaded_faults: dict[str, str] = {}


def _emulator_paths() -> tuple[Path, Path]:
    """Build (if needed) the emulator and its host kernel library; their paths (raises
    :class:`~.emulator.build.BuildError`)."""
    return Path(emulator_build.emulator_library()), Path(emulator_build.kernel_library())


def emulator_build_reason(exc: BaseException) -> str:
    """The one-line reason for an emulator that cannot be built (no traceback text)."""
    if isinstance(exc, emulator_build.BuildError):
        return f"cannot build the ACL emulator: {exc}"
    lines = str(exc).strip().splitlines()
    what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return f"cannot build the ACL emulator: {what}"


def _open(path: Path) -> ctypes.CDLL:
    key = str(path)
    if key not in _loaded:
        _loaded[key] = load(path)
    return _loaded[key]


def resolve(lib: str | os.PathLike[str] | None = None,
            emulator: bool | None = None) -> tuple[Discovery, str]:
    """Discovery result and a one-line reason ('' when a library was found).

    An explicitly named library that names nothing usable sets ``Discovery.error`` (and the
    reason); :func:`create` and :func:`preflight` raise that as a configuration error."""
    if emulator:
        return Discovery(None, "emulator=True", [], emulator=True, explicit="emulator=True"), ""
    d = find_library(lib)
    if d.emulator and emulator is False:
        msg = "the ACL emulator was requested but emulator=False"
        return Discovery(None, error=msg, explicit=d.explicit or d.source), msg
    return d, d.reason


def _config_problem(d: Discovery) -> str:
    """Why an explicitly named (non-emulator) library is bad input, checked without loading
    it ('' when it looks like a shared library, or when nothing was named)."""
    if d.error:
        return d.error
    if not d.explicit or d.emulator or d.path is None:
        return ""
    what = check_shared_object(d.path)
    return f"{_label(d)}: {what}" if what else ""


def _label(d: Discovery) -> str:
    """``--acl-lib PATH`` / ``MDLRI_ACL_LIB=PATH`` (as typed) for messages about ``d``; a
    discovered library by its path and how it was found."""
    return d.explicit or f"{d.path} (found via {d.source})"


def availability(lib: str | os.PathLike[str] | None = None,
                 emulator: bool | None = None) -> str | None:
    """None when a library is found and loads (the emulator is built), else the reason
    (configuration errors included, as their one line).

    Runs no ACL function (``aclInit`` works once per process)."""
    d, reason = resolve(lib, emulator)
    if reason:
        return reason
    problem = _config_problem(d)
    if problem:
        return problem
    try:
        path = _emulator_paths()[0] if d.emulator else d.path
        assert path is not None
        cdll = _open(path)
    except LibraryNotFound as exc:
        return str(exc)
    except Exception as exc:  # noqa: BLE001 - emulator build failures, as one line
        return emulator_build_reason(exc)
    missing = missing_required(cdll)
    return not_a_runtime(_label(d), missing) if missing else None


# ---------------------------------------------------------------------------------------------
# faults


def _mapped(path: Path) -> bool:
    """Whether ``path`` is mapped into this process (loaded by anyone, not only :func:`_open`)."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return False
    return os.path.realpath(path) in maps


def _fault_names(faults: Iterable[str]) -> str:
    """The fault list as MDLRI_EMU_FAULTS carries it (sorted, comma-joined); unknown names
    are a configuration error."""
    from mdlri_conformance.backends.faults import UnknownFault, check
    from .emulator_faults import EMULATOR_FAULTS
    try:
        return ",".join(sorted(check(faults, EMULATOR_FAULTS)))
    except UnknownFault as exc:
        raise BackendConfigError(f"--fault: {exc} (or not implemented by the acl emulator)") \
            from None


def _normal(value: str) -> str:
    return ",".join(sorted({x.strip() for x in value.split(",") if x.strip()}))


def _apply_emulator_faults(faults: Sequence[str], path: Path) -> None:
    """Export the fault list for the emulator before it is loaded; raise when this process
    already holds the emulator with another fault set (its constructor read MDLRI_EMU_FAULTS
    once). Without ``faults`` the set is whatever MDLRI_EMU_FAULTS says (README)."""
    from .emulator_faults import EMU_ENV
    wanted = _fault_names(faults) if faults else _normal(os.environ.get(EMU_ENV, ""))
    key = str(path)
    if key in _loaded_faults:
        loaded_with = _loaded_faults[key]
    elif _mapped(path):  # loaded outside create(): it read the variable as it is now
        loaded_with = _normal(os.environ.get(EMU_ENV, ""))
    else:
        if faults:
            os.environ[EMU_ENV] = wanted
        return
    if loaded_with != wanted:
        raise BackendConfigError(
            f"--fault {wanted or '(none)'}: the ACL emulator is already loaded in this process "
            f"with faults {loaded_with or '(none)'} (it reads {EMU_ENV} once, at load); use a "
            "fresh process, e.g. -n 1")


# ---------------------------------------------------------------------------------------------
# devices and kernel binary


def _device_ids(devices: Any = None, device: Any = None) -> tuple[list[int], str]:
    """The device ids and how to name them in messages (``--devices 0,7``)."""
    raw = devices if devices not in (None, "", []) else device
    if raw in (None, "", []):
        return [0], "--devices 0"
    try:
        if isinstance(raw, str):
            ids = [int(x) for x in raw.replace(" ", "").split(",") if x != ""]
        elif isinstance(raw, int):
            ids = [int(raw)]
        else:
            ids = [int(x) for x in raw]
    except (TypeError, ValueError):
        raise BackendConfigError(f"--devices {raw!r}: expected comma-separated integers") \
            from None
    if not ids or any(i < 0 for i in ids):
        raise BackendConfigError(f"--devices {raw!r}: expected non-negative device ids")
    return ids, "--devices " + ",".join(map(str, ids))


def _check_kernel_binary(kernel_binary: str | os.PathLike[str] | None) -> None:
    """An explicitly named kernel binary (argument or MDLRI_KERNEL_BINARY) must exist."""
    if kernel_binary:
        label, value = "--kernel-binary", str(kernel_binary)
    elif os.environ.get(KERNEL_VAR):
        label, value = f"{KERNEL_VAR}=", os.environ[KERNEL_VAR]
    else:
        return
    if not os.path.isfile(value):
        what = "a directory, not a file" if os.path.isdir(value) else "no such file"
        sep = "" if label.endswith("=") else " "
        raise BackendConfigError(f"{label}{sep}{value}: {what}")


def _count_text(count: int, emulator: bool) -> str:
    who = "the ACL emulator" if emulator else "the runtime"
    ids = "0" if count == 1 else f"0-{count - 1}"
    text = f"{who} reports {count} device{'s' if count != 1 else ''}: {ids}"
    return text + (f"; set {EMU_DEVICE_VAR} for more" if emulator else "")


def _absent_devices(label: str, ids: Iterable[int], count: int, emulator: bool) -> str:
    """'' when every id is below ``count``, else the one-line message."""
    bad = sorted({i for i in ids if i >= count})
    if not bad:
        return ""
    what = (f"device {bad[0]} does not exist" if len(bad) == 1
            else f"devices {', '.join(map(str, bad))} do not exist")
    return f"{label}: {what} ({_count_text(count, emulator)})"


# ---------------------------------------------------------------------------------------------
# the factory


def _checked_discovery(lib: str | os.PathLike[str] | None, emulator: bool | None,
                       faults: list[str], kernel_binary: str | os.PathLike[str] | None
                       ) -> tuple[Discovery, str]:
    """Discovery, with the option errors that :func:`create` and :func:`preflight` both refuse
    (BackendConfigError): a named library that names nothing usable, ``--fault`` without the
    emulator, a missing ``--kernel-binary``. Returns the discovery and its unavailability
    reason ('' when a library was found)."""
    d, reason = resolve(lib, emulator)
    problem = _config_problem(d)
    if problem:
        raise BackendConfigError(problem)
    if not reason and faults and not d.emulator:
        raise BackendConfigError("--fault needs the ACL emulator (--acl-lib emulator)")
    try:
        virtual = driver.virtual_device_wanted()
    except driver.VirtualDeviceError as exc:
        raise BackendConfigError(str(exc)) from None
    if virtual and d.emulator:
        raise BackendConfigError("--virtual-device: the ACL emulator (--acl-lib emulator) is "
                                 "no CANN runtime and loads no driver; give a real runtime "
                                 "library with --acl-lib")
    _check_kernel_binary(kernel_binary)
    try:
        kernel_layouts.strict_mode()
    except kernel_layouts.LayoutModeError as exc:
        raise BackendConfigError(str(exc)) from None
    if d.emulator:
        _check_emulator_device_count()
    return d, reason


def _check_emulator_device_count() -> None:
    """``MDLRI_EMU_DEVICE_COUNT`` must be a device count the emulator takes, 1 to 64
    (core.c device_count would read anything else as 1, or clamp it, in silence)."""
    value = os.environ.get(EMU_DEVICE_VAR)
    if value is None or value == "":
        return
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= 64:
        raise BackendConfigError(f"{EMU_DEVICE_VAR}={value!r}: expected a device count "
                                 "from 1 to 64")


def create(lib: str | os.PathLike[str] | None = None, device: int | str = 0,
           kernel_binary: str | os.PathLike[str] | None = None,
           emulator: bool | None = None, faults: Iterable[str] = ()) -> AclBackend:
    """The ``acl`` backend (see the module docstring): raises BackendConfigError for bad
    input, returns an unavailable backend when nothing is found or the emulator cannot be
    built."""
    device = int(device)
    faults = list(faults or ())
    d, reason = _checked_discovery(lib, emulator, faults, kernel_binary)
    if reason:
        return AclBackend(None, device=device, unavailable=reason)
    kernels: Path | None = None
    if d.emulator:
        try:
            path, kernels = _emulator_paths()
        except Exception as exc:  # noqa: BLE001 - build failures become the reason
            return AclBackend(None, device=device, unavailable=emulator_build_reason(exc))
        _apply_emulator_faults(faults, path)
    else:
        assert d.path is not None
        path = d.path
    try:
        cdll = _open(path)
    except SecondEmulatorCopy as exc:  # the process's setup, not the machine: refused
        raise BackendConfigError(str(exc)) from None
    except LibraryNotFound as exc:  # an ELF library whose dependencies do not load
        return AclBackend(None, device=device, unavailable=str(exc))
    if d.emulator:
        from .emulator_faults import EMU_ENV
        _loaded_faults.setdefault(str(path), _normal(os.environ.get(EMU_ENV, "")))
    missing = missing_required(cdll)
    if missing:
        msg = not_a_runtime(_label(d), missing)
        if d.explicit:
            raise BackendConfigError(msg)
        return AclBackend(None, device=device, unavailable=msg)
    explicit = kernel_binary or os.environ.get(KERNEL_VAR) or virtual_kernels(d.emulator)
    backend = AclBackend(cdll, lib_path=path, device=device,
                         kernel_binary=str(explicit or kernels or ""), emulator=d.emulator)
    _check_device_in_process(backend, d.emulator)
    if not backend.kernel_binary_path() and not d.emulator:
        backend._kernel_binary = str(default_kernel_binary(backend.soc_name()))
        backend.capabilities = backend._detect_capabilities()
    backend.check_kernel_layouts()
    return backend


def virtual_kernels(emulator: bool) -> str | None:
    """The virtual device's kernel binary (:mod:`backends.hal.kernel_binary`) when a real
    runtime runs over the virtual device: the default kernel binary there."""
    if emulator or not driver.virtual_device_wanted():
        return None
    from mdlri_conformance.backends.hal.kernel_binary import virtual_kernel_binary
    try:
        return str(virtual_kernel_binary())
    except emulator_build.BuildError as exc:
        raise BackendConfigError(f"--virtual-device: {exc}") from None


def _check_device_in_process(backend: AclBackend, emulator: bool) -> None:
    """A device the initialised runtime does not have is bad input (--devices), not an
    unavailable backend."""
    if backend.unsupported_reason() is None:
        return
    fn = backend.sym.get("aclrtGetDeviceCount")
    if fn is None:
        return
    count = c_uint32(0)
    if fn(byref(count)) != 0 or count.value == 0:
        return  # no device at all: the runtime is unusable here, not the option
    msg = _absent_devices(f"--devices {backend.device}", [backend.device], count.value, emulator)
    if msg:
        raise BackendConfigError(msg)


# ---------------------------------------------------------------------------------------------
# preflight


def preflight(lib: str | os.PathLike[str] | None = None, devices: Any = None,
              kernel_binary: str | os.PathLike[str] | None = None,
              faults: Iterable[str] = (), emulator: bool | None = None, device: Any = None,
              **_: Any) -> str | None:
    """Check the options once, before any process loads the runtime; raise
    BackendConfigError for bad input (the cases of :func:`create`, and every id of
    ``devices`` (a list of ints or ``"0,7"``; ``device`` for one) against the runtime's
    device count, read in a subprocess since ``aclInit`` works once per process).

    Returns the one-line reason when the library is merely unavailable (nothing found by
    discovery, the emulator cannot be built, a discovered library is no ACL runtime), or when
    the runtime reports a kernel argument layout the suite cannot follow (KRN-02: the line
    names the kernel and the field): the run would test nothing. None otherwise; a library
    whose dependencies do not load, or a runtime that reports no device, is left to the
    backend, which says why in each process."""
    ids, label = _device_ids(devices, device)
    faults = list(faults or ())
    d, reason = _checked_discovery(lib, emulator, faults, kernel_binary)
    if faults:
        _fault_names(faults)
    if reason:
        return reason
    if d.emulator:
        try:
            path, kernels = _emulator_paths()
        except Exception as exc:  # noqa: BLE001 - gcc missing, compile errors, cache
            return emulator_build_reason(exc)
    else:
        assert d.path is not None
        path, kernels = d.path, None
    from .emulator_faults import EMU_ENV

    from .probe import run_probe
    binary = str(kernel_binary or os.environ.get(KERNEL_VAR) or kernels
                 or virtual_kernels(d.emulator) or "auto")
    info = run_probe(path, ids[0], PREFLIGHT_TIMEOUT_S, count_only=True, drop_env=(EMU_ENV,),
                     kernel_binary=binary)
    if info.get("missing_required"):
        if d.explicit:
            raise BackendConfigError(not_a_runtime(_label(d), info["missing_required"]))
        return not_a_runtime(_label(d), info["missing_required"])
    count = info.get("device_count")
    if info.get("device_count_rc") or not isinstance(count, int) or count == 0:
        return None  # load error, probe crash, aclInit or count failed: the backend says why
    msg = _absent_devices(label, ids, count, d.emulator)
    if msg:
        raise BackendConfigError(msg)
    return _refused_layout(info)


def _refused_layout(info: dict[str, Any]) -> str | None:
    """The one-line refusal of the first kernel layout the probe found unfollowable."""
    from mdlri_conformance.kernel.layout import LayoutCheck, first_refusal, refusal_line
    checks = [LayoutCheck.from_json(c) for c in info.get("layout") or []]
    refused = first_refusal(checks)
    return None if refused is None else refusal_line(refused)


__all__ = ["AclBackend", "AclRc", "availability", "cache_root", "create",
           "default_kernel_binary", "emulator_build_reason", "find_library", "preflight",
           "resolve"]
