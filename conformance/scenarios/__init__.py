"""End-to-end scenarios from the CANN examples, runnable as ``mdlri-conformance example NAME``."""

from __future__ import annotations

from typing import Any, Callable

from . import (buffer_reset, cond_model, fallback, model_switch, model_sync_external,
               model_update, pipeline, simple_label, simple_model)


def _fallback(backend: Any, emit: Callable[[str], None]) -> bool:
    return fallback.run_fallback(backend, emit).ok


def _simple_model(backend: Any, emit: Callable[[str], None]) -> bool:
    return simple_model.run_simple_model(backend, emit).ok


def _model_update(backend: Any, emit: Callable[[str], None]) -> bool:
    return model_update.run_model_update(backend, emit).ok


def _model_switch(backend: Any, emit: Callable[[str], None]) -> bool:
    return model_switch.run_model_switch(backend, emit).ok


def _simple_label(backend: Any, emit: Callable[[str], None]) -> bool:
    return simple_label.run_simple_label(backend, emit).ok


def _cond_model(backend: Any, emit: Callable[[str], None]) -> bool:
    return cond_model.run_cond_model(backend, emit).ok


def _buffer_reset(backend: Any, emit: Callable[[str], None]) -> bool:
    return buffer_reset.run_buffer_reset(backend, emit).ok


def _model_sync_external(backend: Any, emit: Callable[[str], None]) -> bool:
    return model_sync_external.run_model_sync_external(backend, emit).ok


def _pipeline(backend: Any, emit: Callable[[str], None]) -> bool:
    return pipeline.run_pipeline(backend, emit).ok


#: example name -> runner(backend, emit) returning success
EXAMPLES: dict[str, Callable[[Any, Callable[[str], None]], bool]] = {
    "fallback": _fallback,
    "0_model_task_fallback": _fallback,
    "pipeline": _pipeline,
    "simple_model": _simple_model,
    "0_simple_model": _simple_model,
    "model_update": _model_update,
    "1_model_update": _model_update,
    "model_switch": _model_switch,
    "2_model_switch": _model_switch,
    "simple_label": _simple_label,
    "0_simple_label": _simple_label,
    "cond_model": _cond_model,
    "3_cond_model": _cond_model,
    "buffer_reset": _buffer_reset,
    "5_reusable_buffer_reset": _buffer_reset,
    "model_sync_external": _model_sync_external,
    "4_model_sync_external": _model_sync_external,
}
