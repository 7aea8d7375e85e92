"""Per-call overhead of the acl binding, as a ratio against a bare ctypes call of a no-op C
function, measured side by side in one run.

    python bench/binding_overhead.py [--acl-lib emulator|PATH] [--calls N] [--repeat R]

It compiles a tiny no-op shared object with gcc (same signatures as the measured ACL
functions), builds one captured model with one VALUE_WRITE task on the acl backend (the
emulator by default), and times four methods, one per shape of the binding (an enum out, two
outs, a ``uint32_t`` out, no out: ``task_get_type``, ``capture_get_info``, ``task_get_seq_id``,
``synchronize_stream``), per call (best of R rounds of N calls):

* ``noop``      bare ctypes call of the no-op C function (argtypes set, byref out-param);
* ``c-direct``  bare ctypes call of the library's own C function (the C side's cost);
* ``floor``     the least a Python method over the same C call can do: a method call that
                calls the prepared function with a reused out-parameter and returns
                ``(rc, raw out value)``, no sentinel, no conversion (the bound of this stack
                on the binding: ctypes with argtypes, one Python frame, a result tuple);
* ``binding``   the AclBackend method (conversions, sentinels, UNWRITTEN mapping, rc check).

Ratios: binding / noop (the figure the issue asks for), floor / noop (its bound), and
binding / c-direct (what the Python layer adds on top of the same C call). The four are
timed round-robin, one round of N calls of each in turn, and each keeps its best round, so a
burst of load from other processes touches all of them alike. Rounds are short (2000 calls,
under a millisecond) and many (50): a short round fits between two preemptions, so on a loaded
machine each column's best round is one that ran alone, where a few long rounds (5 x 20000)
each take a share of the load and the ratios swing by a factor of two.
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import subprocess
import sys
import tempfile
import timeit
from typing import Any
from ctypes import POINTER, byref, c_int, c_uint32, c_void_p
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mdlri_conformance.backends.contract import CaptureMode  # noqa: E402

NOOP_C = r"""
int noop_task_get_type(void *task, int *type) { (void)task; *type = 5; return 0; }
int noop_capture_get_info(void *stream, int *status, void **model) {
    (void)stream; *status = 0; *model = 0; return 0;
}
int noop_task_get_seq_id(void *task, unsigned *id) { (void)task; *id = 0; return 0; }
int noop_synchronize_stream(void *stream) { (void)stream; return 0; }
"""


def build_noop(tmp: Path) -> ctypes.CDLL:
    """Compile the no-op library; its functions typed like the ACL ones they stand for."""
    if shutil.which("gcc") is None:
        sys.exit("bench: gcc is required")
    src, lib = tmp / "noop.c", tmp / "libnoop.so"
    src.write_text(NOOP_C)
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    so = ctypes.CDLL(str(lib))
    so.noop_task_get_type.restype = c_int
    so.noop_task_get_type.argtypes = [c_void_p, POINTER(c_int)]
    so.noop_capture_get_info.restype = c_int
    so.noop_capture_get_info.argtypes = [c_void_p, POINTER(c_int), POINTER(c_void_p)]
    so.noop_task_get_seq_id.restype = c_int
    so.noop_task_get_seq_id.argtypes = [c_void_p, POINTER(c_uint32)]
    so.noop_synchronize_stream.restype = c_int
    so.noop_synchronize_stream.argtypes = [c_void_p]
    return so


def per_call_ns(fns: list, calls: int, repeat: int) -> list[float]:
    """Best-of-``repeat`` time per call of each of ``fns`` in nanoseconds, timed round-robin
    (after a warm-up round of each)."""
    for fn in fns:
        timeit.timeit(fn, number=calls)
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], timeit.timeit(fn, number=calls))
    return [t / calls * 1e9 for t in best]


class Floor:
    """The least a binding method can do around a prepared C function (the ``floor``
    column): one Python frame, the call with a reused out-parameter, a result tuple."""

    def __init__(self, raw_type, raw_info, raw_seq, raw_sync) -> None:
        self._type, self._info, self._seq, self._sync = raw_type, raw_info, raw_seq, raw_sync
        self.i, self.p, self.u = c_int(), c_void_p(), c_uint32()
        self.i_ref, self.p_ref, self.u_ref = byref(self.i), byref(self.p), byref(self.u)

    def task_get_type(self, task, *, null_out: bool = False):
        return self._type(task.ptr, self.i_ref), self.i.value

    def capture_get_info(self, stream, *, null_status: bool = False, null_model: bool = False):
        return self._info(stream.ptr, self.i_ref, self.p_ref), self.i.value, self.p.value

    def task_get_seq_id(self, task, *, null_out: bool = False):
        return self._seq(task.ptr, self.u_ref), self.u.value

    def synchronize_stream(self, stream):
        return self._sync(stream.ptr)


def _rc(result):
    """The rc of a method's result (the first item of a tuple, or the int itself)."""
    return result[0] if isinstance(result, tuple) else result


def setup_task(b):
    """One captured model with one VALUE_WRITE task; returns (stream, model, task, addr)."""
    rc, s = b.create_stream()
    assert rc == 0, rc
    rc, addr = b.malloc(64)
    assert rc == 0, rc
    assert b.capture_begin(s, CaptureMode.RELAXED) == 0
    assert b.value_write(addr, 1, 0, s) == 0
    rc, model = b.capture_end(s)
    assert rc == 0, rc
    rc, _, n = b.get_streams(model, None)
    rc, streams, _ = b.get_streams(model, n)
    rc, _, nt = b.get_tasks_by_stream(streams[0], None)
    rc, tasks, _ = b.get_tasks_by_stream(streams[0], nt)
    return s, model, tasks[0], addr


def main(argv: list[str] | None = None, emit: Any = print) -> dict[str, tuple[float, ...]]:
    """Measure and print the table; returns ``{method: (noop, c-direct, floor, binding)}``
    in ns per call (empty when the acl backend is unsupported here)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--acl-lib", default="emulator")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=50)
    ns = ap.parse_args(argv)

    import mdlri_conformance.backends.acl as acl
    b = acl.create(lib=ns.acl_lib)
    if b.unsupported_reason():
        emit(f"UNSUPPORTED: acl backend: {b.unsupported_reason()}")
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        noop = build_noop(Path(tmp))
        s, model, task, addr = setup_task(b)
        raw_type = b.sym.get("aclmdlRITaskGetType")
        raw_info = b.sym.get("aclmdlRICaptureGetInfo")
        raw_seq = b.sym.get("aclmdlRITaskGetSeqId")
        raw_sync = b.sym.get("aclrtSynchronizeStream")
        noop_type, noop_info = noop.noop_task_get_type, noop.noop_capture_get_info
        noop_seq, noop_sync = noop.noop_task_get_seq_id, noop.noop_synchronize_stream
        out_i, out_p, out_u = c_int(), c_void_p(), c_uint32()
        floor = Floor(raw_type, raw_info, raw_seq, raw_sync)
        rows = []
        cases = [
            ("task_get_type",
             lambda: noop_type(task.ptr, byref(out_i)),
             lambda: raw_type(task.ptr, byref(out_i)),
             lambda: floor.task_get_type(task),
             lambda: b.task_get_type(task)),
            ("capture_get_info",
             lambda: noop_info(s.ptr, byref(out_i), byref(out_p)),
             lambda: raw_info(s.ptr, byref(out_i), byref(out_p)),
             lambda: floor.capture_get_info(s),
             lambda: b.capture_get_info(s)),
            ("task_get_seq_id",
             lambda: noop_seq(task.ptr, byref(out_u)),
             lambda: raw_seq(task.ptr, byref(out_u)),
             lambda: floor.task_get_seq_id(task),
             lambda: b.task_get_seq_id(task)),
            ("synchronize_stream",
             lambda: noop_sync(s.ptr),
             lambda: raw_sync(s.ptr),
             lambda: floor.synchronize_stream(s),
             lambda: b.synchronize_stream(s)),
        ]
        for name, *fns in cases:
            assert _rc(fns[-1]()) == 0 and _rc(fns[-2]()) == 0
            rows.append((name, *per_call_ns(fns, ns.calls, ns.repeat)))
        b.destroy(model)
        b.free(addr)
        b.destroy_stream(s)
    emit(f"acl binding overhead ({b.version()}), best of {ns.repeat} x {ns.calls} calls")
    emit(f"{'method':<18}{'noop ns':>9}{'c-direct ns':>13}{'floor ns':>10}{'binding ns':>12}"
          f"{'binding/noop':>14}{'floor/noop':>12}{'binding/c':>11}")
    for name, t_noop, t_c, t_floor, t_bind in rows:
        emit(f"{name:<18}{t_noop:>9.0f}{t_c:>13.0f}{t_floor:>10.0f}{t_bind:>12.0f}"
              f"{t_bind / t_noop:>14.2f}{t_floor / t_noop:>12.2f}{t_bind / t_c:>11.2f}")
    b.close()
    return {name: tuple(times) for name, *times in rows}


if __name__ == "__main__":
    main()
    sys.exit(0)
