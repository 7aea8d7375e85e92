"""The simulator's layout: each contract API function is written in exactly one place.

Every method of :class:`~backends.contract.Backend`, :class:`~backends.contract.ExtendedBackend`,
:class:`~backends.contract.HostStateBackend` and :class:`~backends.contract.FunctionInfoBackend`
is defined by exactly one class among
``SimBackend``'s MRO (no override chain, no hook table), that class is ``SimBackend`` itself or
an API mixin of ``backends/sim/api/``, and each API mixin's module is named for its area."""

from __future__ import annotations

import inspect
from pathlib import Path

from mdlri_conformance.backends.contract import (Backend, ExtendedBackend, FunctionInfoBackend,
                                                 HostStateBackend)
from mdlri_conformance.backends.sim.backend import SimBackend

SIM_DIR = Path(inspect.getfile(SimBackend)).parent
#: what SimBackend itself defines of the contract (identity and teardown)
CORE = {"version", "kernel_binary_path", "close"}


def _api_names() -> set[str]:
    names: set[str] = set()
    for proto in (Backend, ExtendedBackend, HostStateBackend, FunctionInfoBackend):
        names |= {n for n, v in vars(proto).items()
                  if not n.startswith("_") and inspect.isfunction(v)}
    return names


def _definers(name: str) -> list[type]:
    return [cls for cls in SimBackend.__mro__ if name in vars(cls)]


def test_every_api_function_is_defined_by_exactly_one_class() -> None:
    names = _api_names()
    assert len(names) > 70, sorted(names)
    missing = sorted(n for n in names if not _definers(n))
    twice = {n: [c.__qualname__ for c in _definers(n)] for n in names if len(_definers(n)) > 1}
    assert not missing, f"contract methods the simulator lacks: {missing}"
    assert not twice, f"contract methods defined in more than one class: {twice}"


def test_api_functions_live_in_the_api_package() -> None:
    wrong = {}
    for name in _api_names():
        (cls,) = _definers(name)
        module = cls.__module__.rsplit(".", 2)
        if name in CORE:
            ok = cls is SimBackend
        else:
            ok = module[-2] == "api" and cls is not SimBackend
        if not ok:
            wrong[name] = cls.__module__
    assert not wrong, wrong


def test_no_hook_tables_or_override_chains_are_left() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SIM_DIR.rglob("*.py")))
    for token in ("_OVERRIDES", "NOT_HOOKED", "_ext_", "ExtendedSimMixin"):
        assert token not in text, token


def test_no_sim_module_is_over_600_lines() -> None:
    long = {str(p.relative_to(SIM_DIR)): n for p in sorted(SIM_DIR.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, long
