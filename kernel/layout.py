"""A catalog kernel's argument layout against the one a runtime reports (KRN-02).

``aclrtFunctionGetParamCount`` / ``aclrtFunctionGetParamInfo`` (hicann/runtime @681ef76,
``include/external/acl/acl_rt.h:5773,5787``) say where the device reads each parameter of a
kernel in the argument bytes: ``src/runtime/api/impl/api_impl.cc:9322-9342`` answers the
offset and size of the kernel object's parameter records, the records the runtime itself
packs ``aclrtLaunchKernelWithArgsArray`` arguments with
(``src/runtime/core/src/kernel/kernel_utils.cc:465-492``). :func:`compare` holds that against the catalog's struct
(:mod:`kernel.catalog`) and gives one :class:`LayoutCheck` per kernel:

* ``same``: the reported slots are the C struct's;
* ``follow``: they differ, and the suite can pack every field into its slot (as many
  parameters as fields, in field order without overlap, a pointer in 8 bytes, an int32 in 4
  or 8): the argument bytes are built from the reported layout
  (:func:`kernel.catalog.install_layout`);
* ``refuse``: they cannot be followed (fewer parameters than fields, a slot too small or too
  wide for its field, an overlap, a parameter after the fields that is no hidden one);
  ``detail`` is the one line naming the kernel and the differing field;
* ``unreported``, ``unsupported``, ``absent``: nothing to compare (the runtime has no
  parameter information for the kernel, 107000 or the function is not exported; the runtime
  answered 207000; the kernel binary lacks the kernel); the C struct is used.

Hidden trailing parameters: a kernel compiler may add parameters the source does not
declare after the last one it does, a workspace, tiling or synchronisation address that the
runtime fills (``ElfParamInfo`` records come from the binary's metadata,
``src/runtime/core/src/kernel/elf.cc:604-640``, so they count in
``aclrtFunctionGetParamCount``). Parameters after every catalog field, each at least
pointer-sized (8 bytes), none overlapping the fields or each other, are such parameters: the
check follows the fields' slots (``same`` slots become ``follow``) and records the extra
slots in :attr:`LayoutCheck.hidden`; the suite packs only the catalog fields and leaves the
hidden slots to the runtime. ``strict=True`` (``--kernel-layout strict``) refuses them, with
the line of a parameter count that differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .catalog import SLOT_SIZES, KernelSpec, Slot, natural_slots

SAME, FOLLOW, REFUSE = "same", "follow", "refuse"
#: the smallest slot a hidden trailing parameter takes: an address (LP64)
HIDDEN_MIN_SIZE = 8
UNREPORTED, UNSUPPORTED, ABSENT = "unreported", "unsupported", "absent"


@dataclass(frozen=True)
class LayoutCheck:
    """One kernel's comparison: the verdict, the reported slots (None when nothing was
    reported; for ``same`` / ``follow`` the catalog fields' slots only), a one-line
    ``detail`` and the hidden trailing parameters' slots (``same`` / ``follow`` only)."""

    kernel: str
    verdict: str
    reported: tuple[Slot, ...] | None
    detail: str
    hidden: tuple[Slot, ...] = ()

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (the doctor's probe runs in a subprocess)."""
        return {"kernel": self.kernel, "verdict": self.verdict,
                "reported": None if self.reported is None else [list(s) for s in self.reported],
                "detail": self.detail, "hidden": [list(s) for s in self.hidden]}

    @classmethod
    def from_json(cls, d: dict[str, object]) -> "LayoutCheck":
        """The inverse of :meth:`to_json`."""
        rep, hid = d.get("reported"), d.get("hidden")
        slots = None if not isinstance(rep, list) else tuple((int(o), int(s)) for o, s in rep)
        hidden = () if not isinstance(hid, list) else tuple((int(o), int(s)) for o, s in hid)
        return cls(str(d["kernel"]), str(d["verdict"]), slots, str(d.get("detail", "")), hidden)


def describe(spec: KernelSpec, slots: Sequence[Slot] | None = None) -> str:
    """``x@0:8 y@8:8 n@16:4`` -- each field at ``offset:size`` (default: the C struct)."""
    slots = spec.layout if slots is None else slots
    return " ".join(f"{f.name}@{o}:{s}" for f, (o, s) in zip(spec.fields, slots))


def describe_hidden(hidden: Sequence[Slot]) -> str:
    """``2 hidden trailing parameter(s) @24:8 @32:8`` ('' for none)."""
    if not hidden:
        return ""
    return f"{len(hidden)} hidden trailing parameter(s) " + " ".join(
        f"@{o}:{s}" for o, s in hidden)


def compare(spec: KernelSpec, reported: Sequence[Slot], strict: bool = False) -> LayoutCheck:
    """The verdict for ``spec``'s C struct against the ``reported`` slots (an installed
    layout of ``spec`` plays no part); ``strict``: refuse hidden trailing parameters."""
    reported = tuple((int(o), int(s)) for o, s in reported)
    natural = natural_slots(spec.fields)
    name = spec.name
    k, n = len(reported), len(spec.fields)
    head = f"{name}: the runtime reports {k} parameter(s), the catalog struct has {n}"
    if k < n:
        f = spec.fields[k]
        return LayoutCheck(name, REFUSE, reported,
                           f"{head}: parameter {k} '{f.name}' ({f.kind}) is not reported")
    if k > n and strict:
        return LayoutCheck(name, REFUSE, reported,
                           f"{head}: parameter {n} at offset {reported[n][0]} is not in the "
                           "struct (--kernel-layout strict)")
    fields, extra = reported[:n], reported[n:]
    pos = 0
    for i, (f, (off, size), (n_off, n_size)) in enumerate(zip(spec.fields, fields, natural)):
        where = (f"{name} parameter {i} '{f.name}' ({f.kind}): the runtime reports offset "
                 f"{off} size {size}, the catalog struct has offset {n_off} size {n_size}")
        if size not in SLOT_SIZES[f.kind]:
            allowed = " or ".join(map(str, SLOT_SIZES[f.kind]))
            return LayoutCheck(name, REFUSE, reported,
                               f"{where}; the suite packs {f.kind} fields into {allowed} bytes")
        if off < pos:
            return LayoutCheck(name, REFUSE, reported,
                               f"{where}; it overlaps the parameter before it (ends at {pos})")
        pos = off + size
    for i, (off, size) in enumerate(extra, n):
        if size < HIDDEN_MIN_SIZE or off < pos:
            why = (f"size {size} is less than a pointer" if size < HIDDEN_MIN_SIZE
                   else f"it overlaps the parameter before it (ends at {pos})")
            return LayoutCheck(name, REFUSE, reported,
                               f"{head}: parameter {i} at offset {off} is not in the struct, "
                               f"and is no hidden trailing parameter ({why})")
        pos = off + size
    hidden = describe_hidden(extra)
    if fields == natural:
        if not extra:
            return LayoutCheck(name, SAME, fields, describe(spec, fields))
        return LayoutCheck(name, FOLLOW, fields,
                           f"{name}: the catalog struct, then {hidden} left to the runtime",
                           extra)
    diffs = [f"{f.name}@{o}:{s} (catalog {no}:{ns})"
             for f, (o, s), (no, ns) in zip(spec.fields, fields, natural) if (o, s) != (no, ns)]
    return LayoutCheck(name, FOLLOW, fields,
                       f"{name}: arguments packed in the runtime's layout: " + ", ".join(diffs)
                       + (f"; {hidden} left to the runtime" if extra else ""), extra)


def first_refusal(checks: Sequence[LayoutCheck]) -> LayoutCheck | None:
    """The first check the suite cannot follow (None when every layout can be used)."""
    return next((c for c in checks if c.verdict == REFUSE), None)


def refusal_line(check: LayoutCheck) -> str:
    """The one line a run stops with for a refused layout."""
    return (f"kernel argument layout refused: {check.detail} (aclrtFunctionGetParamCount/Info); "
            "the suite cannot build this kernel's arguments")
