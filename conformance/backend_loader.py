"""Backend selection: ``sim`` or ``package.module:factory`` (DESIGN.md "The contract")."""

from __future__ import annotations

import importlib
from typing import Any

from backends.contract import Backend, Cap

#: built-in backend names and the factory each one stands for
BUILTIN = {"sim": "backends.sim:create"}


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


def load_backend(name: str, **options: Any) -> Backend:
    """Import and call the factory; check the result meets the contract's shape."""
    target = resolve(name)
    mod_name, _, fn_name = target.partition(":")
    try:
        module = importlib.import_module(mod_name)
    except ImportError as exc:
        raise BackendLoadError(f"backend {name!r}: cannot import {mod_name!r} ({exc})") from None
    factory = getattr(module, fn_name, None)
    if not callable(factory):
        raise BackendLoadError(f"backend {name!r}: {mod_name!r} has no callable {fn_name!r}")
    backend = factory(**options)
    if not isinstance(backend, Backend):
        raise BackendLoadError(f"backend {name!r}: {target} returned {type(backend).__name__}, "
                               "which does not implement backends.contract.Backend")
    caps = getattr(backend, "capabilities", None)
    if not isinstance(caps, frozenset) or not all(isinstance(c, Cap) for c in caps):
        raise BackendLoadError(f"backend {name!r}: capabilities must be a frozenset of Cap")
    return backend
