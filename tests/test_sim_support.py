"""Shared helpers for the simulator unit tests (no tests of its own)."""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import EventFlag, MemcpyKind
from mdlri_conformance.backends.sim import SimBackend, create
from mdlri_conformance.kernel import catalog

SYNC = int(EventFlag.SYNC)
H2D = MemcpyKind.HOST_TO_DEVICE


@pytest.fixture
def b() -> SimBackend:
    backend = create(destroy_wait_s=0.2)
    yield backend
    backend.close()


def ok(result: Any) -> Any:
    """Assert rc == 0 and return the single output (or the outputs)."""
    if isinstance(result, tuple):
        assert result[0] == 0, result
        return result[1] if len(result) == 2 else result[1:]
    assert result == 0, result
    return None


def func(b: SimBackend, name: str) -> Any:
    binh = ok(b.binary_load_from_file(b.kernel_binary_path()))
    return ok(b.binary_get_function(binh, name))


def launch(backend: SimBackend, fn: Any, stream: Any, **args: int) -> int:
    spec = fn.spec
    return backend.launch_kernel_with_host_args(fn, 1, stream, None, spec.pack(**args),
                                                spec.args_size)


def i32(b: SimBackend, addr: int, n: int) -> list[int]:
    return catalog.read_i32(b.mem, addr, n).tolist()


def put_i32(b: SimBackend, addr: int, values: list[int]) -> None:
    arr = np.asarray(values, dtype=np.int32)
    ok(b.memcpy(addr, arr.nbytes, arr, arr.nbytes, H2D))


def tasks(b: SimBackend, stream: Any) -> list[Any]:
    n = ok(b.get_tasks_by_stream(stream, None))[1]
    return ok(b.get_tasks_by_stream(stream, n))[0]


def streams(b: SimBackend, model: Any) -> list[Any]:
    n = ok(b.get_streams(model, None))[1]
    return ok(b.get_streams(model, n))[0]


def types(b: SimBackend, stream: Any) -> list[int]:
    return [int(ok(b.task_get_type(t))) for t in tasks(b, stream)]


def in_thread(backend: SimBackend, fn: Callable[[], Any], set_device: bool = True) -> Any:
    """Run ``fn`` in another thread (after set_device) and return its result."""
    box: list[Any] = []

    def body() -> None:
        if set_device:
            assert backend.set_device(0) == 0
        box.append(fn())

    t = threading.Thread(target=body)
    t.start()
    t.join(5)
    assert box, "thread did not finish"
    return box[0]
