"""Destroy callbacks: aclmdlRIDestroyRegisterCallback / UnregisterCallback (LIFE-09..LIFE-14,
ERR-22, ERR-23, Q-18).

A callback is a Python callable ``func(user_data)`` (the contract's stand-in for a C function
pointer; identity is the callable object). Each records what it saw into a list.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import pytest

from mdlri_conformance.backends.contract import (
    Cap, CaptureStatus, Err,
)
from mdlri_conformance.conformance import expect
from mdlri_conformance.conformance.harness import Dev
from mdlri_conformance.conformance.specs._setups import Case, case, sub_model

pytestmark = pytest.mark.requires(Cap.CALLBACKS, Cap.CAPTURE, Cap.KERNELS)

X = np.arange(1, 9, dtype=np.int32)


def model(dev: Dev) -> Any:
    s = dev.stream()
    dev.begin(s)
    dev.launch("fallback_main", s, input=dev.buffer(X), output=dev.buffer(n=8))
    return dev.end(s)


def recorder(log: list[Any], tag: str) -> Callable[[Any], None]:
    """A new callback that appends (tag, user_data, thread) to ``log``."""
    def cb(user_data: Any) -> None:
        log.append((tag, user_data, threading.current_thread()))
    return cb


def register(dev: Dev, m: Any, func: Any, user_data: Any = None) -> None:
    expect.ok(dev.b.destroy_register_callback(m, func, user_data),
              "aclmdlRIDestroyRegisterCallback (setup)")


@pytest.mark.clause("LIFE-09")
def test_callback_runs_inside_destroy(dev: Dev) -> None:
    """LIFE-09: a registered callback has run, in the calling thread with its userData, when Destroy returns."""
    log: list[Any] = []
    m = model(dev)
    register(dev, m, recorder(log, "cb"), {"k": 1})
    expect.eq(log, [], "callbacks run before Destroy")
    expect.ok(dev.destroy(m), "aclmdlRIDestroy")
    expect.eq(log, [("cb", {"k": 1}, threading.current_thread())],
              "callback calls when Destroy returned")


@pytest.mark.clause("LIFE-10")
def test_same_func_twice(dev: Dev) -> None:
    """LIFE-10: registering the same func twice, even with other userData, returns 107000."""
    log: list[Any] = []
    m = model(dev)
    cb = recorder(log, "cb")
    register(dev, m, cb, 1)
    expect.rc(dev.b.destroy_register_callback(m, cb, 2), Err.RT_PARAM_INVALID,
              "second aclmdlRIDestroyRegisterCallback of the same func")
    expect.ok(dev.destroy(m), "aclmdlRIDestroy")
    expect.eq([u for _, u, _ in log], [1], "userData of the calls")


@pytest.mark.clause("LIFE-10")
def test_unregister_unknown_func(dev: Dev) -> None:
    """LIFE-10: unregistering a func that is not registered returns 107000."""
    m = model(dev)
    register(dev, m, recorder([], "a"))
    expect.rc(dev.b.destroy_unregister_callback(m, recorder([], "b")), Err.RT_PARAM_INVALID,
              "aclmdlRIDestroyUnregisterCallback of an unregistered func")


@pytest.mark.clause("LIFE-10")
def test_unregister_matches_func_only(dev: Dev) -> None:
    """LIFE-10: unregister matches on func alone (no userData argument); the callback no longer runs."""
    log: list[Any] = []
    m = model(dev)
    cb = recorder(log, "cb")
    register(dev, m, cb, "data")
    expect.ok(dev.b.destroy_unregister_callback(m, cb), "aclmdlRIDestroyUnregisterCallback")
    expect.rc(dev.b.destroy_unregister_callback(m, cb), Err.RT_PARAM_INVALID,
              "second aclmdlRIDestroyUnregisterCallback")
    expect.ok(dev.destroy(m), "aclmdlRIDestroy")
    expect.eq(log, [], "callback calls")


#: the order the callbacks are registered in, by creation index: neither creation order nor
#: its reverse, so an order that follows creation (e.g. ascending addresses of callables made
#: one after the other) is told apart from registration order
_REGISTRATION_ORDERS = ([5, 2, 7, 0, 3, 6, 1, 4], [3, 6, 0, 5, 1, 7, 4, 2], [6, 1, 4, 7, 2, 0, 5, 3])


@pytest.mark.clause("LIFE-11", "Q-18")
def test_callback_order(dev: Dev, fingerprint: Any) -> None:
    """LIFE-11: every registered callback runs exactly once. Q-18: the invocation order is
    recorded as a rule that does not vary between identical runs: on three models, eight
    callbacks each, registered in three different scrambled orders, the callbacks ran in
    registration order every time, in reverse every time, or in an order independent of
    registration (the runtime keeps them in a set keyed by function address,
    feature/model/model.cc:2339-2356, a std::set, core/inc/model/model.hpp:423); the raw orders depend on addresses and are not kept."""
    rules = []
    for order in _REGISTRATION_ORDERS:
        log: list[Any] = []
        m = model(dev)
        funcs = [recorder(log, f"c{i}") for i in range(len(order))]
        tags = [f"c{i}" for i in order]
        for i in order:
            register(dev, m, funcs[i], f"c{i}")
        expect.ok(dev.destroy(m), "aclmdlRIDestroy")
        ran = [t for t, _, _ in log]
        expect.eq(sorted(ran), sorted(tags), "callbacks run (each once)")
        rules.append("registration order" if ran == tags else
                     "reverse registration order" if ran == tags[::-1] else "other")
    fingerprint.record("Q-18:order", rules[0] if len(set(rules)) == 1 and rules[0] != "other"
                       else "independent of registration order")


@pytest.mark.clause("LIFE-12")
def test_unregistered_callback_not_called(dev: Dev) -> None:
    """LIFE-12: an unregistered callback is not called; the others still are."""
    log: list[Any] = []
    m = model(dev)
    keep, drop = recorder(log, "keep"), recorder(log, "drop")
    register(dev, m, keep)
    register(dev, m, drop)
    expect.ok(dev.b.destroy_unregister_callback(m, drop), "aclmdlRIDestroyUnregisterCallback")
    expect.ok(dev.destroy(m), "aclmdlRIDestroy")
    expect.eq([t for t, _, _ in log], ["keep"], "callbacks run")


@pytest.mark.clause("LIFE-13")
@pytest.mark.parametrize("call", ["register_null_model", "register_null_func",
                                  "unregister_null_model", "unregister_null_func"])
def test_null_arguments(dev: Dev, call: str) -> None:
    """LIFE-13: a NULL model or func returns 107000 (no ACL-layer check)."""
    b = dev.b
    cb = recorder([], "cb")
    rc = {
        "register_null_model": lambda: b.destroy_register_callback(None, cb, None),
        "register_null_func": lambda: b.destroy_register_callback(model(dev), None, None),
        "unregister_null_model": lambda: b.destroy_unregister_callback(None, cb),
        "unregister_null_func": lambda: b.destroy_unregister_callback(model(dev), None),
    }[call]()
    expect.rc(rc, Err.RT_PARAM_INVALID, call)


@pytest.mark.clause("LIFE-13")
@pytest.mark.requires(Cap.COND)
@pytest.mark.parametrize("call", ["register", "unregister"])
def test_sub_model_null_func(dev: Dev, call: str) -> None:
    """LIFE-13: with a sub-model and func NULL, Register/UnregisterCallback return 107000: the
    NULL-func check comes before the sub-model's 207000 (`api/impl/api_error.cc:7021-7030`,
    `:7036-7045`)."""
    sub = sub_model(dev)
    rc = (dev.b.destroy_register_callback(sub, None, None) if call == "register"
          else dev.b.destroy_unregister_callback(sub, None))
    expect.rc(rc, Err.RT_PARAM_INVALID, f"{call} callback of a sub-model with func NULL")


@pytest.mark.clause("LIFE-13")
def test_register_during_capture(dev: Dev) -> None:
    """LIFE-13: registering on the GetInfo model while it captures is allowed; it runs at Destroy."""
    log: list[Any] = []
    s = dev.stream()
    dev.begin(s)
    dev.launch("fallback_main", s, input=dev.buffer(X), output=dev.buffer(n=8))
    rc, _, m = dev.b.capture_get_info(s)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    expect.ok(dev.b.destroy_register_callback(m, recorder(log, "cb"), 7),
              "aclmdlRIDestroyRegisterCallback during capture")
    ended = dev.end(s)
    expect.ok(dev.destroy(ended), "aclmdlRIDestroy")
    expect.eq([u for _, u, _ in log], [7], "userData of the calls")


@pytest.mark.clause("LIFE-14")
@pytest.mark.requires(Cap.CROSS_STREAM)
def test_callback_runs_when_failed_end_destroys(dev: Dev) -> None:
    """LIFE-14: a callback registered during capture runs when a failed CaptureEnd (107025) destroys the model."""
    log: list[Any] = []
    s1, s2 = dev.stream(), dev.stream()
    fork = dev.event()
    dev.begin(s1)
    rc, _, m = dev.b.capture_get_info(s1)
    expect.ok(rc, "aclmdlRICaptureGetInfo (setup)")
    register(dev, m, recorder(log, "cb"), "ud")
    expect.ok(dev.b.record_event(fork, s1), "aclrtRecordEvent (setup)")
    expect.ok(dev.b.stream_wait_event(s2, fork), "aclrtStreamWaitEvent (setup)")
    dev.launch("fallback_main", s2, input=dev.buffer(X), output=dev.buffer(n=8))
    rc, out = dev.b.capture_end(s1)  # s2 never rejoins: XS-02
    if rc == Err.SUCCESS and out:
        dev.model(out)
    expect.rc(rc, Err.RT_STREAM_UNJOINED, "aclmdlRICaptureEnd with an unjoined stream (setup)")
    expect.eq(dev.b.capture_get_info(s1)[1], CaptureStatus.NONE, "origin status after the failure")
    expect.eq([u for _, u, _ in log], ["ud"], "callback calls after the failed CaptureEnd")


# ---------------------------------------------------------------------------------------------
# ERR-22, ERR-23


def _reg_null_model(dev: Dev) -> int:
    return dev.b.destroy_register_callback(None, recorder([], "x"), None)


def _reg_null_func(dev: Dev) -> int:
    return dev.b.destroy_register_callback(model(dev), None, None)


def _reg_twice(dev: Dev) -> int:
    m, cb = model(dev), recorder([], "x")
    register(dev, m, cb)
    return dev.b.destroy_register_callback(m, cb, None)


def _reg_sub_model(dev: Dev) -> int:
    return dev.b.destroy_register_callback(sub_model(dev), recorder([], "x"), None)


@pytest.mark.clause("ERR-22")
@pytest.mark.parametrize("make, expected", [
    case(_reg_null_model, Err.RT_PARAM_INVALID),
    case(_reg_null_func, Err.RT_PARAM_INVALID),
    case(_reg_twice, Err.RT_PARAM_INVALID),
    case(_reg_sub_model, Err.RT_FEATURE_NOT_SUPPORT, Cap.COND),
])
def test_err22_register_callback(dev: Dev, make: Case, expected: int) -> None:
    """ERR-22: aclmdlRIDestroyRegisterCallback returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIDestroyRegisterCallback")


def _unreg_null_model(dev: Dev) -> int:
    return dev.b.destroy_unregister_callback(None, recorder([], "x"))


def _unreg_null_func(dev: Dev) -> int:
    return dev.b.destroy_unregister_callback(model(dev), None)


def _unreg_not_registered(dev: Dev) -> int:
    return dev.b.destroy_unregister_callback(model(dev), recorder([], "x"))


def _unreg_sub_model(dev: Dev) -> int:
    return dev.b.destroy_unregister_callback(sub_model(dev), recorder([], "x"))


@pytest.mark.clause("ERR-23")
@pytest.mark.parametrize("make, expected", [
    case(_unreg_null_model, Err.RT_PARAM_INVALID),
    case(_unreg_null_func, Err.RT_PARAM_INVALID),
    case(_unreg_not_registered, Err.RT_PARAM_INVALID),
    case(_unreg_sub_model, Err.RT_FEATURE_NOT_SUPPORT, Cap.COND),
])
def test_err23_unregister_callback(dev: Dev, make: Case, expected: int) -> None:
    """ERR-23: aclmdlRIDestroyUnregisterCallback returns the error of its error-table cell."""
    expect.rc(make(dev), expected, "aclmdlRIDestroyUnregisterCallback")


@pytest.mark.clause("RT-39", "LIFE-06")
@pytest.mark.requires(Cap.HANDLE_VALIDATION)
@pytest.mark.parametrize("call", ["register", "unregister"])
def test_destroyed_model_before_null_func(dev: Dev, call: str) -> None:
    """RT-39: DestroyRegister/UnregisterCallback of a destroyed model with func NULL returns
    107017: the rts entry validates the model handle before the decorator's NULL-func 107000
    (`api/api_c_standard_soc.cc:1798+`, `api/impl/api_error.cc:7021-7024, 7036-7039`)."""
    m = model(dev)
    expect.ok(dev.destroy(m), "aclmdlRIDestroy (setup)")
    if call == "register":
        rc = dev.b.destroy_register_callback(m, None, None)
    else:
        rc = dev.b.destroy_unregister_callback(m, None)
    expect.rc(rc, Err.RT_INVALID_HANDLE, f"aclmdlRIDestroy{call.title()}Callback(destroyed, NULL)",
              clause="RT-39")
