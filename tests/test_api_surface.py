"""The Model RI API surface: every public aclmdlRI function of the runtime's header is bound,
exported by the emulator and implemented by the simulator, so none goes untested unnoticed."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from mdlri_conformance.backends import contract
from mdlri_conformance.backends.acl.symbols import SIGNATURES
from mdlri_conformance.backends.sim import SimBackend

ROOT = Path(__file__).resolve().parents[1]

#: the ``ACL_FUNC_VISIBILITY aclError aclmdlRI*`` declarations of
#: hicann/runtime@681ef76 ``include/external/acl/acl_rt.h``
PUBLIC_MDLRI = """
aclmdlRIAbort aclmdlRIAddCondTask aclmdlRIBindStream aclmdlRIBuildBegin aclmdlRIBuildEnd
aclmdlRICaptureBegin aclmdlRICaptureEnd aclmdlRICaptureGetInfo aclmdlRICaptureTaskGrpBegin
aclmdlRICaptureTaskGrpEnd aclmdlRICaptureTaskUpdateBegin aclmdlRICaptureTaskUpdateEnd
aclmdlRICaptureThreadExchangeMode aclmdlRICaptureToModelRIBegin aclmdlRICondHandleCreate
aclmdlRICondHandleGetCondPtr aclmdlRIDebugJsonPrint aclmdlRIDebugPrint aclmdlRIDestroy
aclmdlRIDestroyRegisterCallback aclmdlRIDestroyUnregisterCallback aclmdlRIEndTask
aclmdlRIExecute aclmdlRIExecuteAsync aclmdlRIGetId aclmdlRIGetName aclmdlRIGetStreams
aclmdlRIGetTasksByStream aclmdlRIKernelTaskGetAttribute aclmdlRISetName aclmdlRITaskDisable
aclmdlRITaskGetParams aclmdlRITaskGetSeqId aclmdlRITaskGetType aclmdlRITaskSetParams
aclmdlRIUnbindStream aclmdlRIUpdate
""".split()


def _called_by_the_binding() -> dict[str, str]:
    """ACL function name -> the AclBackend method whose body names it."""
    from mdlri_conformance.backends.acl.backend import AclBackend
    found: dict[str, str] = {}
    for name, fn in inspect.getmembers(AclBackend, inspect.isfunction):
        for sym in re.findall(r'"(acl\w+)"', inspect.getsource(fn)):
            found.setdefault(sym, name)
    return found


def _snake(name: str) -> str:
    """CaptureToModelRIBegin -> capture_to_model_ri_begin (an acronym stays one word)."""
    words = r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"
    return re.sub(words, "_", name.removeprefix("aclmdlRI")).lower()


@pytest.mark.parametrize("name", PUBLIC_MDLRI)
def test_every_public_function_is_bound(name: str) -> None:
    assert name in SIGNATURES, f"{name} has no ctypes signature (backends/acl/symbols.py)"
    method = _called_by_the_binding().get(name)
    assert method is not None, f"no AclBackend method calls {name}"
    assert hasattr(contract.ExtendedBackend, method) or hasattr(contract.Backend, method), \
        f"AclBackend.{method} ({name}) is not a contract method"
    assert callable(getattr(SimBackend, method, None)), f"the simulator has no {method}"


def test_the_emulator_declares_every_public_function() -> None:
    header = (ROOT / "backends" / "acl" / "emulator" / "include" / "mdlri_acl_rt.h").read_text()
    declared = set(re.findall(r"MDLRI_API aclError (aclmdlRI\w+)\(", header))
    assert declared == set(PUBLIC_MDLRI)


def test_snake_names_follow_the_c_names() -> None:
    """The contract's method for aclmdlRIXxxYyy is xxx_yyy, so a reader finds one from the
    other (aclmdlRICaptureBegin -> capture_begin)."""
    methods = _called_by_the_binding()
    odd = {n: methods[n] for n in PUBLIC_MDLRI if methods.get(n) != _snake(n)}
    assert odd == {}
