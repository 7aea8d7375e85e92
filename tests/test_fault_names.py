"""The emulator's fault table and the Python lists name the same faults: every name in
``faults.c`` is in :data:`~backends.acl.emulator_faults.EMULATOR_FAULTS` (and described in
:data:`~backends.faults.FAULTS`) and back, every ``F_*`` constant of ``emu.h`` has a name, and
every fault has a hook somewhere in the emulator's sources."""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

from mdlri_conformance.backends.acl.emulator_faults import EMULATOR_FAULTS
from mdlri_conformance.backends.faults import FAULTS

SRC = Path(str(importlib.resources.files("mdlri_conformance.backends.acl.emulator"))) / "src"


def _c_table() -> dict[str, str]:
    """``F_CONSTANT -> "name"`` from faults.c's NAMES table."""
    text = (SRC / "faults.c").read_text(encoding="utf-8")
    return dict(re.findall(r'\[(F_\w+)\]\s*=\s*"([^"]+)"', text))


def _c_constants() -> list[str]:
    """The ``F_*`` constants of emu.h's fault enum, F_COUNT excluded."""
    text = (SRC / "emu.h").read_text(encoding="utf-8")
    body = re.search(r"enum\s*\{([^}]*F_COUNT[^}]*)\}", text)
    assert body, "emu.h has no enum ending in F_COUNT"
    return [c for c in re.findall(r"\b(F_\w+)\b", body.group(1)) if c != "F_COUNT"]


def test_every_c_fault_has_a_python_entry() -> None:
    """faults.c -> Python: each name of the C table is an emulator fault and is described in
    the catalogue."""
    names = set(_c_table().values())
    assert names, "faults.c has no NAMES entries"
    assert not names - set(EMULATOR_FAULTS), sorted(names - set(EMULATOR_FAULTS))
    assert not names - set(FAULTS), sorted(names - set(FAULTS))


def test_every_python_emulator_fault_exists_in_c() -> None:
    """Python -> faults.c: each emulator fault of the Python list is in the C table and is
    described in the catalogue."""
    names = set(_c_table().values())
    assert not set(EMULATOR_FAULTS) - names, sorted(set(EMULATOR_FAULTS) - names)
    assert set(EMULATOR_FAULTS) <= set(FAULTS)


def test_every_constant_has_a_name_and_a_hook() -> None:
    table = _c_table()
    constants = _c_constants()
    assert constants and set(constants) == set(table), (constants, sorted(table))
    sources = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SRC.glob("*.c"))
                        if p.name != "faults.c")
    unhooked = [c for c in constants if not re.search(rf"emu_fault\(\s*{c}\s*\)", sources)]
    assert not unhooked, f"faults without a hook in the emulator: {unhooked}"
