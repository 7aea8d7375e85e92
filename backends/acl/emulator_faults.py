"""The faults the host ABI emulator (``libmdlri_acl_emu.so``, :mod:`backends.acl.emulator`)
implements: a subset of the catalogue :data:`backends.faults.FAULTS`, whose entries describe
them. The emulator reads the names from :data:`EMU_ENV` (comma-separated) once, when it is
loaded; its C table is ``emulator/src/faults.c`` (tests/test_fault_names.py keeps the two
lists equal)."""

from __future__ import annotations

#: the faults libmdlri_acl_emu.so implements (read from MDLRI_EMU_FAULTS at load)
EMULATOR_FAULTS: frozenset[str] = frozenset({
    "crash-query", "hang-query-sync", "timeout-ignored", "execute-null-model-107000",
    "execute-while-updating", "getstreams-origin-first", "no-107039", "fault-not-sticky",
    "setparams-without-update", "wrong-thread-end-leaks-mode", "whole-kernel-per-block",
})

#: environment variable the emulator reads its faults from
EMU_ENV = "MDLRI_EMU_FAULTS"

__all__ = ["EMULATOR_FAULTS", "EMU_ENV"]
