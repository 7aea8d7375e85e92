"""The simulator's kernels: the catalog semantics are the whole launch's whatever numBlocks
is (KRN-01), the injected fault ``whole-kernel-per-block`` runs the body once per block, and
aclrtFunctionGetParamCount/Info report the layout the function's kernel packs (KRN-02)."""

from __future__ import annotations

import numpy as np
import pytest

import mdlri_conformance.backends.sim as sim
from mdlri_conformance.backends.contract import UNWRITTEN, Err, MemcpyKind
from mdlri_conformance.kernel import catalog

N = 10


def _accumulate(b, blocks: int) -> list[int]:
    acc0, x = np.arange(N, dtype=np.int32), np.full(N, 5, dtype=np.int32)
    addrs = []
    for arr in (acc0, x):
        rc, addr = b.malloc(arr.nbytes)
        assert rc == 0 and b.memcpy(addr, arr.nbytes, arr, arr.nbytes,
                                    MemcpyKind.HOST_TO_DEVICE) == 0
        addrs.append(addr)
    _, binary = b.binary_load_from_file(b.kernel_binary_path())
    _, func = b.binary_get_function(binary, "accumulate")
    args = catalog.get("accumulate").pack(acc=addrs[0], x=addrs[1], n=N)
    _, s = b.create_stream()
    assert b.launch_kernel_with_host_args(func, blocks, s, None, args, len(args)) == 0
    assert b.synchronize_stream(s) == 0
    out = np.zeros(N, dtype=np.int32)
    assert b.memcpy(out, out.nbytes, addrs[0], out.nbytes, MemcpyKind.DEVICE_TO_HOST) == 0
    return out.tolist()


@pytest.mark.parametrize("blocks", [1, 3, 8])
def test_num_blocks_does_not_change_the_output(blocks: int) -> None:
    b = sim.create()
    try:
        assert _accumulate(b, blocks) == [i + 5 for i in range(N)]
    finally:
        b.close()


def test_whole_kernel_per_block_fault_applies_accumulate_once_per_block() -> None:
    b = sim.create(faults=["whole-kernel-per-block"])
    try:
        assert _accumulate(b, 1) == [i + 5 for i in range(N)]
        assert _accumulate(b, 3) == [i + 15 for i in range(N)]
    finally:
        b.close()


def test_param_count_and_info_report_the_spec_layout() -> None:
    b = sim.create()
    try:
        _, binary = b.binary_load_from_file(b.kernel_binary_path())
        _, func = b.binary_get_function(binary, "axpy_f32")
        assert b.function_get_param_count(func) == (Err.SUCCESS, 5)
        assert [b.function_get_param_info(func, i)[1:] for i in range(5)] == \
            list(catalog.get("axpy_f32").layout)
        assert b.function_get_param_info(func, 5) == (Err.RT_PARAM_INVALID, UNWRITTEN, UNWRITTEN)
        assert b.function_get_param_info(func, 1, null_offset=True, null_size=True) == \
            (Err.INVALID_PARAM, UNWRITTEN, UNWRITTEN)
        assert b.function_get_param_count(None) == (Err.INVALID_PARAM, UNWRITTEN)
        assert b.binary_unload(binary) == 0
        assert b.function_get_param_count(func) == (Err.RT_INVALID_HANDLE, UNWRITTEN)
    finally:
        b.close()


def test_a_manifest_is_read_again_once_it_changed(tmp_path) -> None:
    """aclrtBinaryLoadFromFile reads the manifest as it is at the call (the simulator keeps a
    read manifest only while the file is unchanged)."""
    import os

    from mdlri_conformance.backends.sim.kernels import MAGIC
    path = tmp_path / "k.manifest"
    path.write_text(f"{MAGIC}\nadd\n")
    b = sim.create()
    rc, first = b.binary_load_from_file(str(path))
    assert rc == 0 and first.names == ["add"]
    first.names.append("mutated by a caller")
    assert b.binary_load_from_file(str(path))[1].names == ["add"]
    path.write_text(f"{MAGIC}\nadd\nfill\n")
    assert b.binary_load_from_file(str(path))[1].names == ["add", "fill"]
    path.write_text("not a manifest\n")
    assert b.binary_load_from_file(str(path)) == (Err.RT_PARAM_INVALID, UNWRITTEN)
    os.remove(path)
    assert b.binary_load_from_file(str(path)) == (Err.RT_PARAM_INVALID, UNWRITTEN)
    assert b.binary_load_from_file(str(tmp_path)) == (Err.RT_PARAM_INVALID, UNWRITTEN)
    b.close()
