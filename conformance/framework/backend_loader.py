"""Backend selection: ``sim`` or ``package.module:factory`` (DESIGN.md "The contract")."""

from __future__ import annotations

import importlib
import os
from typing import Any, Callable, Iterable

from mdlri_conformance.backends.contract import Backend, BackendConfigError, Cap

#: built-in backend names and the factory each one stands for
BUILTIN = {"sim": "mdlri_conformance.backends.sim:create", "acl": "mdlri_conformance.backends.acl:create"}


class BackendLoadError(Exception):
    """A backend name that cannot be turned into a backend (a usage error, one line)."""


def resolve(name: str) -> str:
    """The ``module:factory`` a backend name stands for."""
    if name in BUILTIN:
        return BUILTIN[name]
    if ":" in name:
        return name
    known = ", ".join(sorted(BUILTIN))
    raise BackendLoadError(f"unknown backend {name!r}: use one of {known} or package.module:factory")


def parse_devices(devices: str | None) -> list[int]:
    """``"0,1,2"`` -> ``[0, 1, 2]`` (None or empty -> ``[0]``)."""
    if not devices:
        return [0]
    try:
        ids = [int(x) for x in str(devices).replace(" ", "").split(",") if x != ""]
    except ValueError:
        raise BackendLoadError(f"--devices {devices!r}: expected comma-separated integers") \
            from None
    if not ids or any(i < 0 for i in ids):
        raise BackendLoadError(f"--devices {devices!r}: expected non-negative device ids")
    return ids


def acl_options_problem(backend: str, against: str | None,
                        **given: str | bool | None) -> str | None:
    """Why acl options are given in vain (one line), None when a backend of the run is acl:
    ``--devices``, ``--acl-lib`` and ``--kernel-binary`` (``given``, keyed by their option
    names with ``_``) configure the acl backend only, and any other would ignore them."""
    if "acl" in (backend, against):
        return None
    for key, value in given.items():
        if value:
            opt = f"--{key.replace('_', '-')}" + ("" if value is True else f" {value}")
            return f"{opt}: only the acl backend takes it (this run's backend is {backend!r})"
    return None


def worker_index(worker: str | None) -> int:
    """The index of an xdist worker id (``gw3`` -> 3; None or the controller -> 0)."""
    digits = "".join(ch for ch in (worker or "") if ch.isdigit())
    return int(digits) if digits else 0


def fault_options(name: str, faults: Iterable[str] | None,
                  acl_lib: str | None = None) -> dict[str, Any]:
    """``{"faults": [...]}`` for ``--fault``: the sim takes any catalogue name, the
    acl backend only the emulator's (:data:`backends.acl.emulator_faults.EMULATOR_FAULTS`) and only
    with ``--acl-lib emulator``; anything else is a one-line :class:`BackendLoadError`."""
    names = [f for f in (faults or ()) if f]
    if not names:
        return {}
    from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS
    from mdlri_conformance.backends.faults import FAULTS, UnknownFault, check
    try:
        if name == "sim":
            return {"faults": sorted(check(names))}
        if name == "acl":
            lib = acl_lib or os.environ.get("MDLRI_ACL_LIB")
            if lib != "emulator":
                raise BackendLoadError("--fault with --backend acl needs --acl-lib emulator")
            sim_only = sorted({n for n in names if n in FAULTS and n not in EMULATOR_FAULTS})
            if sim_only:
                raise BackendLoadError(
                    f"--fault {', '.join(sim_only)}: exists only on the simulator (--backend "
                    "sim); the emulator's faults: mdlri-conformance faults --list --backend acl")
            return {"faults": sorted(check(names, EMULATOR_FAULTS))}
    except UnknownFault as exc:
        known = "" if name == "sim" else " (or not implemented by the acl emulator)"
        raise BackendLoadError(f"--fault: {exc}{known}") from None
    raise BackendLoadError(f"--fault: backend {name!r} takes no injected faults")


def backend_options(name: str, *, acl_lib: str | None = None,
                    kernel_binary: str | None = None, devices: str | None = None,
                    worker: str | None = None,
                    faults: Iterable[str] | None = None) -> dict[str, Any]:
    """Factory keywords for backend ``name``: ``faults`` for ``--fault`` (sim, or acl with
    the emulator; see :func:`fault_options`); for ``acl`` also lib, kernel binary and the
    device of this xdist worker: ``devices[worker index % len(devices)]``."""
    extra = fault_options(name, faults, acl_lib)
    if name != "acl":
        return extra
    ids = parse_devices(devices)
    opts: dict[str, Any] = {"device": ids[worker_index(worker) % len(ids)], **extra}
    if acl_lib:
        opts["lib"] = acl_lib
    if kernel_binary:
        opts["kernel_binary"] = kernel_binary
    return opts


def find_factory(name: str) -> Callable[..., Any]:
    """Import the factory a backend name stands for, without calling it."""
    target = resolve(name)
    mod_name, _, fn_name = target.partition(":")
    module = _import(name, mod_name)
    factory = getattr(module, fn_name, None)
    if not callable(factory):
        raise BackendLoadError(f"backend {name!r}: {mod_name!r} has no callable {fn_name!r}")
    return factory


def load_backend(name: str, **options: Any) -> Backend:
    """Import and call the factory; check the result meets the contract's shape."""
    target = resolve(name)
    factory = find_factory(name)
    try:
        backend = factory(**options)
    except BackendConfigError as exc:
        raise BackendLoadError(f"backend {name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - an outside factory's own failure, shown in one line
        raise BackendLoadError(f"backend {name!r}: {target} raised {_one_line(exc)}") from None
    if not isinstance(backend, Backend):
        raise BackendLoadError(f"backend {name!r}: {target} returned {type(backend).__name__}, "
                               "which does not implement backends.contract.Backend")
    caps = getattr(backend, "capabilities", None)
    if not isinstance(caps, frozenset) or not all(isinstance(c, Cap) for c in caps):
        raise BackendLoadError(f"backend {name!r}: capabilities must be a frozenset of Cap")
    return backend


def preflight(name: str, options: dict[str, Any], **extra: Any) -> str | None:
    """Check a backend before the processes that run specs load it, so that bad input is one
    line here rather than a failure in every worker. The factory's module may define
    ``preflight(**options, **extra)``: it raises :class:`BackendConfigError` for bad input
    (e.g. a device the runtime does not have) and returns a one-line reason when the backend
    is unavailable (nothing to test with); ``extra`` carries what only it needs (``devices``,
    the whole id list). A module without one is checked by creating the backend once with the
    factory ``options`` and closing it. Returns the unavailability reason, or None."""
    mod_name = resolve(name).partition(":")[0]
    module = _import(name, mod_name)
    check = getattr(module, "preflight", None)
    if not callable(check):
        backend = load_backend(name, **options)
        why = getattr(backend, "unsupported_reason", lambda _w=None: None)(None)
        backend.close()
        return why if isinstance(why, str) and why else None
    try:
        why = check(**{**options, **extra})
    except BackendConfigError as exc:
        raise BackendLoadError(f"backend {name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001
        raise BackendLoadError(f"backend {name!r}: preflight raised {_one_line(exc)}") from None
    return why if isinstance(why, str) and why else None


def _import(name: str, mod_name: str) -> Any:
    """The backend's module; whatever its import raises is one line of bad input (an
    ImportError, or the module's own failure at import time: a RuntimeError, a SyntaxError,
    a SystemExit)."""
    try:
        return importlib.import_module(mod_name)
    except ImportError as exc:
        raise BackendLoadError(f"backend {name!r}: cannot import {mod_name!r} ({exc})") from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - an outside module's own failure
        raise BackendLoadError(f"backend {name!r}: importing {mod_name!r} raised "
                               f"{_one_line(exc)}") from None


def _one_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (never a traceback)."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
