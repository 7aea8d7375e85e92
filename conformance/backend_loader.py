"""Backend selection: ``sim`` or ``package.module:factory`` (DESIGN.md "The contract")."""

from __future__ import annotations

import importlib
from typing import Any, Callable

from backends.contract import Backend, Cap

#: built-in backend names and the factory each one stands for
BUILTIN = {"sim": "backends.sim:create", "acl": "backends.acl:create"}


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


def worker_index(worker: str | None) -> int:
    """The index of an xdist worker id (``gw3`` -> 3; None or the controller -> 0)."""
    digits = "".join(ch for ch in (worker or "") if ch.isdigit())
    return int(digits) if digits else 0


def backend_options(name: str, *, acl_lib: str | None = None,
                    kernel_binary: str | None = None, devices: str | None = None,
                    worker: str | None = None) -> dict[str, Any]:
    """Factory keywords for backend ``name``: only ``acl`` takes any (lib, kernel binary,
    the device of this xdist worker: ``devices[worker index % len(devices)]``)."""
    if name != "acl":
        return {}
    ids = parse_devices(devices)
    opts: dict[str, Any] = {"device": ids[worker_index(worker) % len(ids)]}
    if acl_lib:
        opts["lib"] = acl_lib
    if kernel_binary:
        opts["kernel_binary"] = kernel_binary
    return opts


def find_factory(name: str) -> Callable[..., Any]:
    """Import the factory a backend name stands for, without calling it."""
    target = resolve(name)
    mod_name, _, fn_name = target.partition(":")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:
        raise BackendLoadError(f"backend {name!r}: cannot import {mod_name!r} ({exc})") from None
    factory = getattr(module, fn_name, None)
    if not callable(factory):
        raise BackendLoadError(f"backend {name!r}: {mod_name!r} has no callable {fn_name!r}")
    return factory


def load_backend(name: str, **options: Any) -> Backend:
    """Import and call the factory; check the result meets the contract's shape."""
    target = resolve(name)
    backend = find_factory(name)(**options)
    if not isinstance(backend, Backend):
        raise BackendLoadError(f"backend {name!r}: {target} returned {type(backend).__name__}, "
                               "which does not implement backends.contract.Backend")
    caps = getattr(backend, "capabilities", None)
    if not isinstance(caps, frozenset) or not all(isinstance(c, Cap) for c in caps):
        raise BackendLoadError(f"backend {name!r}: capabilities must be a frozenset of Cap")
    return backend
