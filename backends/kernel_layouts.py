"""Ask a backend where each catalog kernel's parameters live and hold it against the catalog
(KRN-02), through the contract only: ``binary_load_from_file``, ``binary_get_function`` and
the :class:`~backends.contract.FunctionInfoBackend` pair ``function_get_param_count`` /
``function_get_param_info``.

:func:`check_binary` gives one :class:`~kernel.layout.LayoutCheck` per kernel (same, follow,
refuse; unreported, unsupported, absent when there is nothing to compare);
:func:`install` makes the process pack every kernel's arguments in the layout its check
found (:func:`kernel.catalog.install_layout`). The acl backend runs both when it starts,
``mdlri-conformance doctor`` prints the checks, and a refused layout stops a run in one line
(:func:`kernel.layout.refusal_line`).

Hidden trailing parameters (a compiler's workspace, tiling or synchronisation address after
the declared ones, :mod:`kernel.layout`) are followed unless :data:`MODE_VAR` is ``strict``
(``--kernel-layout strict``); :func:`hidden_lines` names them for the doctor and the run's
probe findings.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from mdlri_conformance.kernel import catalog
from mdlri_conformance.kernel.layout import (ABSENT, FOLLOW, SAME, UNREPORTED, UNSUPPORTED,
                                             LayoutCheck, compare, describe, describe_hidden)

from .contract import NOT_SUPPORTED_CODES, Err, err_name


#: the environment variable that holds the layout mode (``--kernel-layout`` sets it, so the
#: doctor's probe, the pytest run and its worker processes all read the same)
MODE_VAR = "MDLRI_KERNEL_LAYOUT"
#: ``follow``: hidden trailing parameters are followed; ``strict``: refused
MODES = ("follow", "strict")


class BinaryNotLoaded(Exception):
    """The kernel binary did not load; the message is one line."""


class LayoutModeError(ValueError):
    """:data:`MODE_VAR` holds no known mode; the message is one line."""


def strict_mode() -> bool:
    """Whether :data:`MODE_VAR` asks for ``strict`` (unset or empty: ``follow``); raises
    :class:`LayoutModeError` for another value."""
    value = os.environ.get(MODE_VAR, "").strip()
    if value and value not in MODES:
        raise LayoutModeError(f"{MODE_VAR}={value!r}: use {' or '.join(MODES)} "
                              "(--kernel-layout)")
    return value == "strict"


def check_function(backend: Any, name: str, func: Any, strict: bool = False) -> LayoutCheck:
    """The layout check of catalog kernel ``name`` whose function handle is ``func``
    (``strict``: hidden trailing parameters are refused)."""
    count_fn = getattr(backend, "function_get_param_count", None)
    info_fn = getattr(backend, "function_get_param_info", None)
    if count_fn is None or info_fn is None:
        return LayoutCheck(name, UNREPORTED, None,
                           "the backend has no aclrtFunctionGetParamCount/Info")
    rc, count = count_fn(func)
    if rc != Err.SUCCESS:
        verdict = UNSUPPORTED if rc in NOT_SUPPORTED_CODES else UNREPORTED
        return LayoutCheck(name, verdict, None,
                           f"aclrtFunctionGetParamCount answered {err_name(rc)}")
    slots = []
    for i in range(int(count)):
        rc, offset, size = info_fn(func, i)
        if rc != Err.SUCCESS:
            verdict = UNSUPPORTED if rc in NOT_SUPPORTED_CODES else UNREPORTED
            return LayoutCheck(name, verdict, None,
                               f"aclrtFunctionGetParamInfo({i}) answered {err_name(rc)}")
        slots.append((int(offset), int(size)))
    return compare(catalog.NATURAL[name], slots, strict)


def check_binary(backend: Any, binary_path: str, names: Iterable[str] | None = None,
                 strict: bool | None = None) -> list[LayoutCheck]:
    """Load ``binary_path``, check every kernel of ``names`` (default: the whole catalog) and
    unload it; raises :class:`BinaryNotLoaded` when the binary does not load. ``strict``
    (default: :func:`strict_mode`) refuses hidden trailing parameters. The calling thread
    must hold the backend's device (``set_device``)."""
    strict = strict_mode() if strict is None else strict
    rc, binary = backend.binary_load_from_file(binary_path, None)
    if rc != Err.SUCCESS:
        raise BinaryNotLoaded(f"aclrtBinaryLoadFromFile({binary_path}) answered {err_name(rc)}")
    checks: list[LayoutCheck] = []
    try:
        for name in (catalog.NATURAL if names is None else names):
            rc, func = backend.binary_get_function(binary, name)
            if rc != Err.SUCCESS:
                checks.append(LayoutCheck(name, ABSENT, None,
                                          f"not in the kernel binary (aclrtBinaryGetFunction "
                                          f"answered {err_name(rc)})"))
                continue
            checks.append(check_function(backend, name, func, strict))
    finally:
        backend.binary_unload(binary)
    return checks


def install(checks: Iterable[LayoutCheck]) -> list[str]:
    """Make this process pack each checked kernel in the layout its check found: the reported
    slots for ``follow`` (and ``same``), the C struct otherwise. Returns the kernels now
    packed differently from their C struct. Call it only when no check refused."""
    followed = []
    for c in checks:
        if c.verdict in (SAME, FOLLOW) and c.reported is not None:
            catalog.install_layout(c.kernel, c.reported)
        elif c.kernel in catalog.NATURAL:
            catalog.install_layout(c.kernel, catalog.NATURAL[c.kernel].layout)
        if c.verdict == FOLLOW:
            followed.append(c.kernel)
    return followed


def table(checks: Iterable[LayoutCheck]) -> list[str]:
    """One line per kernel: name, verdict, the reported layout (``field@offset:size``) and,
    when it differs from the C struct, the catalog's slots of the differing fields; for a
    refused or uncompared kernel, why."""
    rows = []
    for c in checks:
        spec = catalog.NATURAL.get(c.kernel)
        if c.verdict in (SAME, FOLLOW) and spec is not None and c.reported is not None:
            text = describe(spec, c.reported)
            diffs = [f"{f.name}@{o}:{s}" for f, (o, s), r in
                     zip(spec.fields, spec.layout, c.reported) if (o, s) != r]
            if diffs:
                text += "  (catalog struct: " + " ".join(diffs) + ")"
            if c.hidden:
                text += "  + " + describe_hidden(c.hidden)
        else:
            text = c.detail
        rows.append(f"{c.kernel:<21} {c.verdict:<11} {text}")
    return rows


def summary(checks: Iterable[LayoutCheck]) -> str:
    """One line: how many kernels match, are followed, refused, or were not compared."""
    counts: dict[str, int] = {}
    for c in checks:
        counts[c.verdict] = counts.get(c.verdict, 0) + 1
    order = ("same", "follow", "refuse", "unreported", "unsupported", "absent")
    return ", ".join(f"{counts[v]} {v}" for v in order if counts.get(v))


def hidden_lines(checks: Iterable[LayoutCheck]) -> list[str]:
    """One line per kernel whose reported layout has hidden trailing parameters that the
    suite follows (none under ``strict``, where they are refused)."""
    return [f"{c.kernel}: {describe_hidden(c.hidden)} after the catalog fields, left to the "
            "runtime (a compiler's workspace, tiling or synchronisation address)"
            for c in checks if c.hidden and c.verdict in (SAME, FOLLOW)]
