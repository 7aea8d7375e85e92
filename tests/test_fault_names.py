"""The emulator's fault table and the Python catalogue name the same faults: every name in
``faults.c`` is in :data:`EMULATOR_FAULTS` and back, every ``F_*`` constant of ``emu.h`` has a
name, and every fault has a hook somewhere in the emulator's sources."""

from __future__ import annotations

import importlib.resources
import re
from pathlib import Path

from mdlri_conformance.backends.sim.faults import EMULATOR_FAULTS, FAULTS

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


def test_the_c_table_names_exactly_the_emulator_faults() -> None:
    names = set(_c_table().values())
    assert names == set(EMULATOR_FAULTS), (sorted(names - set(EMULATOR_FAULTS)),
                                           sorted(set(EMULATOR_FAULTS) - names))
    assert set(EMULATOR_FAULTS) <= set(FAULTS)  # each is described in the catalogue


def test_every_constant_has_a_name_and_a_hook() -> None:
    table = _c_table()
    constants = _c_constants()
    assert constants and set(constants) == set(table), (constants, sorted(table))
    sources = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SRC.glob("*.c"))
                        if p.name != "faults.c")
    unhooked = [c for c in constants if not re.search(rf"emu_fault\(\s*{c}\s*\)", sources)]
    assert not unhooked, f"faults without a hook in the emulator: {unhooked}"
