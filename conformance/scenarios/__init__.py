"""End-to-end scenarios from the CANN examples, runnable as ``mdlri-conformance example NAME``.

Each scenario module declares its :class:`~._common.Example` (run function and names);
:data:`EXAMPLES` is derived from those declarations.
"""

from __future__ import annotations

from typing import Any, Callable

from . import (buffer_reset, cond_model, fallback, model_switch, model_sync_external,
               model_update, pipeline, simple_label, simple_model)

_MODULES = (fallback, pipeline, simple_model, model_update, model_switch, simple_label,
            cond_model, buffer_reset, model_sync_external)

#: example name -> runner(backend, emit) returning success
EXAMPLES: dict[str, Callable[[Any, Callable[[str], None]], bool]] = {
    name: m.EXAMPLE.succeeds for m in _MODULES for name in m.EXAMPLE.names}
