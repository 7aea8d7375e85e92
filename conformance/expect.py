"""One assertion-message format for every spec.

Every failed check reads ``[CLAUSE] what: expected X, observed Y`` so a report line names
the clause, the observable and both values. The clause ids come from the running spec's
``clause`` marker (set by the plugin), so specs do not repeat them.

A feature-not-supported code (``contract.NOT_SUPPORTED_CODES``: 207000, and 207019 for an op
the driver/firmware cannot update) where the spec expected something else raises
:class:`Unsupported`, which the plugin reports as UNSUPPORTED, never FAIL (DESIGN.md).
"""

from __future__ import annotations

from typing import Any, Iterable

from mdlri_conformance.backends.contract import NOT_SUPPORTED_CODES, UNWRITTEN, Err, err_name
from mdlri_conformance.conformance.framework.outcomes import (ConformanceFailure, Unsupported,
                                                               current_clauses)


def diverge(what: str, expected: Any, observed: Any, *, case: dict[str, Any] | None = None,
            replay: str = "", extra: str = "", clause: str | None = None) -> None:
    """Fail with a divergence record: the one-line message plus the structured details."""
    __tracebackhide__ = True
    msg = f"{_tag(clause)} {what}: expected {_show(expected)}, observed {_show(observed)}"
    raise ConformanceFailure(msg + (f"\n{extra}" if extra else ""),
                             {"expected": _show(expected), "observed": _show(observed),
                              "case": case, "replay": replay})


def _tag(clause: str | None) -> str:
    ids = (clause,) if clause else current_clauses.get()
    return "[" + ",".join(ids) + "]" if ids else "[?]"


def _show(v: Any) -> str:
    if v is UNWRITTEN:
        return "UNWRITTEN"
    if hasattr(v, "tolist"):
        return repr(v.tolist())
    return repr(v)


def fail(what: str, expected: Any, observed: Any, clause: str | None = None) -> None:
    """Raise the suite's failure for one observable."""
    __tracebackhide__ = True
    raise ConformanceFailure(f"{_tag(clause)} {what}: expected {_show(expected)}, "
                             f"observed {_show(observed)}")


def not_supported(observed: Any, expected: Iterable[int] = ()) -> bool:
    """Whether ``observed`` is a feature-not-supported code the check did not expect."""
    try:
        return observed in NOT_SUPPORTED_CODES and observed not in tuple(expected)
    except TypeError:  # unhashable observations (lists of codes) are never a code
        return False


def unsupported_if(observed: Any, what: str, expected: Iterable[int] = ()) -> None:
    """Raise :class:`Unsupported` when ``observed`` is an unexpected 207000 / 207019."""
    __tracebackhide__ = True
    if not_supported(observed, expected):
        raise Unsupported(f"{what} returned {err_name(observed)}")


def _unsupported_guard(observed: int, expected: Iterable[int], what: str) -> None:
    __tracebackhide__ = True
    unsupported_if(observed, what, expected)


def rc(observed: int, expected: int | Iterable[int], what: str,
       clause: str | None = None) -> None:
    """Check a return code (or one of a set of accepted codes)."""
    __tracebackhide__ = True
    exp = (expected,) if isinstance(expected, int) else tuple(expected)
    _unsupported_guard(observed, exp, what)
    if observed not in exp:
        want = err_name(exp[0]) if len(exp) == 1 else "one of " + ", ".join(map(err_name, exp))
        raise ConformanceFailure(f"{_tag(clause)} {what} rc: expected {want}, "
                                 f"observed {err_name(observed)}")


def ok(observed: int, what: str, clause: str | None = None) -> None:
    """Check that a call succeeded (rc 0)."""
    __tracebackhide__ = True
    rc(observed, Err.SUCCESS, what, clause)


def eq(observed: Any, expected: Any, what: str, clause: str | None = None) -> None:
    """Check equality (numpy arrays compare element-wise and by shape)."""
    __tracebackhide__ = True
    if hasattr(observed, "tolist") or hasattr(expected, "tolist"):
        o = observed.tolist() if hasattr(observed, "tolist") else list(observed)
        e = expected.tolist() if hasattr(expected, "tolist") else list(expected)
        if o != e:
            fail(what, expected, observed, clause)
        return
    if observed is UNWRITTEN or expected is UNWRITTEN:
        if observed is not expected:
            fail(what, expected, observed, clause)
        return
    if not observed == expected:
        fail(what, expected, observed, clause)


def ne(observed: Any, unexpected: Any, what: str, clause: str | None = None) -> None:
    """Check inequality."""
    __tracebackhide__ = True
    if observed == unexpected:
        fail(what, f"anything but {_show(unexpected)}", observed, clause)


def true(cond: bool, what: str, expected: Any = True, observed: Any = False,
         clause: str | None = None) -> None:
    """Check a condition; ``expected``/``observed`` describe it in the message."""
    __tracebackhide__ = True
    if not cond:
        fail(what, expected, observed, clause)
