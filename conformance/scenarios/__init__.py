"""End-to-end scenarios from the CANN examples, runnable as ``mdlri-conformance example NAME``."""

from __future__ import annotations

from typing import Any, Callable

from . import fallback, pipeline


def _fallback(backend: Any, emit: Callable[[str], None]) -> bool:
    return fallback.run_fallback(backend, emit).ok


def _pipeline(backend: Any, emit: Callable[[str], None]) -> bool:
    return pipeline.run_pipeline(backend, emit).ok


#: example name -> runner(backend, emit) returning success
EXAMPLES: dict[str, Callable[[Any, Callable[[str], None]], bool]] = {
    "fallback": _fallback,
    "0_model_task_fallback": _fallback,
    "pipeline": _pipeline,
}
