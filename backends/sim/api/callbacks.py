"""Destroy callbacks (emulator ``callbacks.c``): aclmdlRIDestroyRegisterCallback,
aclmdlRIDestroyUnregisterCallback, and how they run when a model is freed (LIFE-09..14)."""

from __future__ import annotations

from typing import Any

from ..cond import SubModel
from ..guard import guarded
from ..handles import live
from ..model import SimModel
from .checks import E_HANDLE, E_NOT_SUPPORT, E_PARAM, OK


class CallbacksApi:
    """Registration of destroy callbacks; ``SimBackend._free_model`` runs them."""

    def _run_destroy_callbacks(self, callbacks: list[tuple[Any, Any]]) -> None:
        """Run a freed model's callbacks in ascending id() order of the callable (LIFE-11,
        Q-18); an exception is recorded in ``callback_errors`` and does not stop the rest."""
        for func, data in sorted(callbacks, key=lambda c: id(c[0])):
            try:
                func(data)
            except Exception as exc:  # noqa: BLE001 - a user callback's own failure
                self.callback_errors.append(f"{func!r}: {exc!r}")

    def _cb_model(self, model: Any, func: Any) -> tuple[int, Any]:
        """The model handle first (the rts entry validates it, 107017), then the decorator's
        NULL model or func (107000), then a sub-model (207000)
        (`api/impl/api_error.cc:7021-7030, 7036-7045`)."""
        if model is not None and not live(model, SimModel):
            return E_HANDLE, None
        if model is None or func is None:
            return E_PARAM, None
        if isinstance(model, SubModel):
            return E_NOT_SUPPORT, None
        return OK, model

    @guarded()
    def destroy_register_callback(self, model: Any, func: Any, user_data: Any) -> int:
        """aclmdlRIDestroyRegisterCallback (LIFE-10/13): keyed by the callable alone."""
        rc, m = self._cb_model(model, func)
        if rc:
            return rc
        if not callable(func):
            return E_PARAM
        cbs = self._callbacks.setdefault(m, [])
        if any(f == func for f, _ in cbs):
            return E_PARAM
        cbs.append((func, user_data))
        return OK

    @guarded()
    def destroy_unregister_callback(self, model: Any, func: Any) -> int:
        """aclmdlRIDestroyUnregisterCallback (LIFE-10/12)."""
        rc, m = self._cb_model(model, func)
        if rc:
            return rc
        cbs = self._callbacks.get(m, [])
        for i, (f, _) in enumerate(cbs):
            if f == func:
                del cbs[i]
                return OK
        return E_PARAM
