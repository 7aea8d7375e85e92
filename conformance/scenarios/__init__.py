"""End-to-end scenarios from the CANN examples, runnable as ``mdlri-conformance example NAME``."""

from __future__ import annotations

from typing import Any, Callable

from . import buffer_reset, fallback, pipeline, simple_model


def _fallback(backend: Any, emit: Callable[[str], None]) -> bool:
    return fallback.run_fallback(backend, emit).ok


def _simple_model(backend: Any, emit: Callable[[str], None]) -> bool:
    return simple_model.run_simple_model(backend, emit).ok


def _buffer_reset(backend: Any, emit: Callable[[str], None]) -> bool:
    return buffer_reset.run_buffer_reset(backend, emit).ok


def _pipeline(backend: Any, emit: Callable[[str], None]) -> bool:
    return pipeline.run_pipeline(backend, emit).ok


#: example name -> runner(backend, emit) returning success
EXAMPLES: dict[str, Callable[[Any, Callable[[str], None]], bool]] = {
    "fallback": _fallback,
    "0_model_task_fallback": _fallback,
    "pipeline": _pipeline,
    "simple_model": _simple_model,
    "0_simple_model": _simple_model,
    "buffer_reset": _buffer_reset,
    "5_reusable_buffer_reset": _buffer_reset,
}
