"""Names, ids and the debug dump (emulator ``names.c``): aclmdlRISetName, aclmdlRIGetName,
aclmdlRIGetId, aclmdlRIDebugJsonPrint, aclmdlRIDebugPrint (NAME, DBG). They also work on
sub-models."""

from __future__ import annotations

import os
from typing import Any

from mdlri_conformance.backends.contract import UNWRITTEN

from ..debugjson import debug_json
from ..guard import NO_CTX_OUT, guarded
from .checks import E_INTERNAL, E_NULL, E_PARAM, OK, is_plain_int


class NamesApi:
    """Model names, ids, DebugJsonPrint and DebugPrint."""

    @guarded()
    def set_name(self, model: Any, name: str | None) -> int:
        """aclmdlRISetName (NAME-01/04): stored in full, the last call wins."""
        if name is None:
            return E_NULL
        rc, m = self._model(model, E_NULL)
        if rc:
            return rc
        if not isinstance(name, str):
            return E_PARAM
        self._names[m] = name
        return OK

    @guarded(NO_CTX_OUT)
    def get_name(self, model: Any, max_len: int, *, null_buf: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetName (NAME-02/03/04): no truncation; a short buffer -> 507000 and the
        buffer cleared (memcpy_s); maxLen 0 -> 107000."""
        if null_buf:
            return E_NULL, UNWRITTEN
        rc, m = self._model(model, E_NULL)
        if rc:
            return rc, UNWRITTEN
        if not is_plain_int(max_len) or max_len <= 0:
            return E_PARAM, UNWRITTEN
        name = self._names.get(m, "")
        if max_len < len(name.encode("utf-8")) + 1:
            return E_INTERNAL, ""
        return OK, name

    @guarded(NO_CTX_OUT)
    def get_id(self, model: Any, *, null_out: bool = False) -> tuple[int, Any]:
        """aclmdlRIGetId (NAME-05): the handle's process-unique id, never reused (Q-24)."""
        if null_out:
            return E_NULL, UNWRITTEN
        rc, m = self._model(model, E_NULL)
        if rc:
            return rc, UNWRITTEN
        return OK, m.id

    @guarded()
    def debug_json_print(self, model: Any, path: str | None, flags: int) -> int:
        """aclmdlRIDebugJsonPrint (DBG-01..04): a Chrome-trace JSON array, any time."""
        if path is None:
            return E_NULL
        rc, m = self._model(model, E_NULL)
        if rc:
            return rc
        if not isinstance(path, (str, os.PathLike)):
            return E_PARAM
        verbose = is_plain_int(flags) and bool(flags & 1)
        text = debug_json(m, self.mem, verbose)
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
        except OSError:
            return E_PARAM  # DBG-02
        return OK

    @guarded()
    def debug_print(self, model: Any) -> int:
        """aclmdlRIDebugPrint (DBG-04, ERR-26): only the model is checked; the dump goes to
        the runtime's log, which the sim does not keep, at any time."""
        rc, _ = self._model(model, E_NULL)
        return rc or OK
