"""End-to-end scenarios from the CANN examples, runnable as ``mdlri-conformance example NAME``.

Each scenario module declares its :class:`~._common.Example` (run function and names);
:data:`EXAMPLES` is derived from those declarations.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

from mdlri_conformance.backends.contract import Cap

from . import (buffer_reset, cond_model, fallback, model_switch, model_sync_external,
               model_update, pipeline, simple_label, simple_model)

#: every scenario moves its inputs and reads its outputs; those with kernels judge them
_DATA = (Cap.DATA_MOVEMENT,)
_COMPUTE = (Cap.DATA_MOVEMENT, Cap.KERNEL_EXEC)

#: each scenario module and the capabilities it needs (the specs' ``requires`` and what
#: ``mdlri-conformance example`` checks after probing); those whose graph waits for the host
#: or another graph to release it need that wait to block
_NEEDS: dict[ModuleType, tuple[Cap, ...]] = {
    fallback: (Cap.CAPTURE, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE, Cap.SEQ_ID,
               Cap.GET_PARAMS, Cap.SET_PARAMS, Cap.DISABLE, Cap.UPDATE, Cap.SYNC_TIMEOUT,
               *_COMPUTE),
    pipeline: (Cap.CAPTURE, Cap.CROSS_STREAM, Cap.KERNELS, Cap.LISTING, Cap.TASK_TYPE,
               Cap.GET_PARAMS, Cap.DISABLE, Cap.UPDATE, Cap.SYNC_TIMEOUT, *_COMPUTE,
               Cap.BLOCKING_WAIT),
    simple_model: (Cap.CAPTURE, Cap.CAPTURE_MODES, Cap.KERNELS, *_COMPUTE),
    model_update: (Cap.CAPTURE, Cap.KERNELS, Cap.TASK_GROUPS, *_COMPUTE, Cap.BLOCKING_WAIT),
    model_switch: (Cap.BUILD, Cap.KERNELS, Cap.STREAM_SWITCH, *_COMPUTE),
    simple_label: (Cap.BUILD, Cap.LABELS, *_DATA),
    cond_model: (Cap.CAPTURE, Cap.KERNELS, Cap.COND, *_COMPUTE),
    buffer_reset: (Cap.CAPTURE, Cap.LISTING, *_DATA),
    model_sync_external: (Cap.CAPTURE, Cap.EXTERNAL_EVENTS, *_DATA, Cap.BLOCKING_WAIT),
}

#: example name -> runner(backend, emit) returning success
EXAMPLES: dict[str, Callable[[Any, Callable[[str], None]], bool]] = {
    name: m.EXAMPLE.succeeds for m in _NEEDS for name in m.EXAMPLE.names}
#: example name -> the capabilities it needs
NEEDS: dict[str, tuple[Cap, ...]] = {
    name: caps for m, caps in _NEEDS.items() for name in m.EXAMPLE.names}


def needs(module: ModuleType) -> tuple[Cap, ...]:
    """The capabilities the scenario of ``module`` needs."""
    return _NEEDS[module]
