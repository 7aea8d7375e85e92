"""Kernel argument layouts (KRN-02): the catalog's C structs, a runtime-reported layout
installed in their place, and the verdicts of :func:`kernel.layout.compare` (same, follow,
refuse with one line naming the kernel and the field)."""

from __future__ import annotations

import struct
from typing import Iterator

import pytest

from mdlri_conformance.kernel import catalog
from mdlri_conformance.kernel import layout as L

WIDE = ((0, 8), (8, 8), (16, 8), (24, 8), (32, 8))


@pytest.fixture(autouse=True)
def _natural() -> Iterator[None]:
    catalog.reset_layouts()
    yield
    catalog.reset_layouts()


def test_natural_slots_are_the_c_structs() -> None:
    assert catalog.get("affine").layout == ((0, 8), (8, 8), (16, 4), (20, 4), (24, 4))
    assert catalog.get("fill").layout == ((0, 8), (8, 4), (12, 4))
    assert catalog.get("trap_if").layout == ((0, 8),)
    for name, spec in catalog.KERNELS.items():
        end = max(o + s for o, s in spec.layout)
        assert spec.args_size == (end + 7) // 8 * 8, name


def test_installed_layout_packs_each_field_in_its_slot_and_reads_it_back() -> None:
    spec = catalog.install_layout("affine", WIDE)
    assert catalog.get("affine") is spec and catalog.installed_layouts() == {"affine": WIDE}
    data = spec.pack(x=0x1000, y=0x2000, n=-3, a=4, b=0x7FFFFFFF)
    assert len(data) == spec.args_size == 40
    assert struct.unpack("<QQqqq", data) == (0x1000, 0x2000, -3, 4, 0x7FFFFFFF)
    assert spec.unpack(data) == {"x": 0x1000, "y": 0x2000, "n": -3, "a": 4, "b": 0x7FFFFFFF}
    # an int32 in an 8-byte slot is its low 4 bytes, whatever the high ones hold
    junk = data[:16] + struct.pack("<iI", 5, 0xDEADBEEF) + data[24:]
    assert spec.unpack(junk)["n"] == 5


def test_installing_the_c_struct_or_resetting_restores_the_catalog_entry() -> None:
    natural = catalog.NATURAL["fill"]
    catalog.install_layout("fill", ((0, 8), (8, 8), (16, 8)))
    assert catalog.get("fill") is not natural and catalog.get("fill").args_size == 24
    assert catalog.install_layout("fill", natural.layout) is natural
    catalog.install_layout("copy", ((0, 8), (8, 8), (16, 8)))
    catalog.reset_layouts()
    assert catalog.installed_layouts() == {} and catalog.get("copy") is catalog.NATURAL["copy"]


@pytest.mark.parametrize("slots", [
    ((0, 8), (8, 8), (16, 4), (20, 4)),                 # one slot short
    ((0, 8), (8, 8), (16, 2), (20, 4), (24, 4)),        # int32 in 2 bytes
    ((0, 4), (8, 8), (16, 4), (20, 4), (24, 4)),        # pointer in 4 bytes
    ((0, 8), (4, 8), (16, 4), (20, 4), (24, 4)),        # overlap
])
def test_slots_a_field_cannot_take_are_refused_by_the_catalog(slots) -> None:
    with pytest.raises(ValueError, match="affine"):
        catalog.install_layout("affine", slots)
    assert catalog.get("affine") is catalog.NATURAL["affine"]


def test_compare_same_and_follow() -> None:
    spec = catalog.get("affine")
    same = L.compare(spec, spec.layout)
    assert (same.verdict, same.detail) == (L.SAME, "x@0:8 y@8:8 n@16:4 a@20:4 b@24:4")
    follow = L.compare(spec, WIDE)
    assert follow.verdict == L.FOLLOW and follow.reported == WIDE
    assert follow.detail == ("affine: arguments packed in the runtime's layout: n@16:8 "
                             "(catalog 16:4), a@24:8 (catalog 20:4), b@32:8 (catalog 24:4)")
    # an installed layout does not change what the C struct is
    catalog.install_layout("affine", WIDE)
    assert L.compare(catalog.get("affine"), WIDE).verdict == L.FOLLOW


@pytest.mark.parametrize("slots,fragment", [
    (((0, 8), (8, 8), (16, 4), (20, 4)),
     "affine: the runtime reports 4 parameter(s), the catalog struct has 5: parameter 4 'b' "
     "(i32) is not reported"),
    (((0, 8), (8, 8), (16, 4), (20, 4), (24, 4), (28, 4)),
     "affine: the runtime reports 6 parameter(s), the catalog struct has 5: parameter 5 at "
     "offset 28 is not in the struct"),
    (((0, 8), (8, 8), (16, 2), (20, 4), (24, 4)),
     "affine parameter 2 'n' (i32): the runtime reports offset 16 size 2, the catalog struct "
     "has offset 16 size 4; the suite packs i32 fields into 4 or 8 bytes"),
    (((0, 8), (8, 16), (24, 4), (28, 4), (32, 4)),
     "affine parameter 1 'y' (ptr): the runtime reports offset 8 size 16"),
    (((0, 8), (4, 8), (16, 4), (20, 4), (24, 4)),
     "affine parameter 1 'y' (ptr): the runtime reports offset 4 size 8, the catalog struct "
     "has offset 8 size 8; it overlaps the parameter before it (ends at 8)"),
])
def test_compare_refuses_in_one_line_naming_kernel_and_field(slots, fragment: str) -> None:
    check = L.compare(catalog.get("affine"), slots)
    assert check.verdict == L.REFUSE and fragment in check.detail and "\n" not in check.detail
    assert L.first_refusal([L.compare(catalog.get("fill"), catalog.get("fill").layout),
                            check]) is check
    line = L.refusal_line(check)
    assert line.startswith("kernel argument layout refused: affine") and "\n" not in line


def test_checks_round_trip_through_json() -> None:
    for check in (L.compare(catalog.get("affine"), WIDE),
                  L.LayoutCheck("copy", L.UNREPORTED, None, "no parameter information")):
        assert L.LayoutCheck.from_json(check.to_json()) == check


# ---------------------------------------------------------------------------------------------
# hidden trailing parameters: a compiler's workspace, tiling or sync address after the fields

HIDDEN = ((32, 8), (40, 8))


def test_hidden_trailing_parameters_are_followed_and_recorded() -> None:
    spec = catalog.get("affine")
    check = L.compare(spec, spec.layout + HIDDEN)
    assert check.verdict == L.FOLLOW and check.reported == spec.layout
    assert check.hidden == HIDDEN
    assert check.detail == ("affine: the catalog struct, then 2 hidden trailing parameter(s) "
                            "@32:8 @40:8 left to the runtime")
    wide = L.compare(spec, WIDE + ((40, 16),))
    assert (wide.verdict, wide.reported, wide.hidden) == (L.FOLLOW, WIDE, ((40, 16),))
    assert wide.detail.endswith("; 1 hidden trailing parameter(s) @40:16 left to the runtime")
    assert L.LayoutCheck.from_json(check.to_json()) == check
    # only the catalog fields are packed: the argument bytes stay the C struct's
    from mdlri_conformance.backends import kernel_layouts
    assert kernel_layouts.install([check]) == ["affine"]
    assert catalog.get("affine") is catalog.NATURAL["affine"]
    assert kernel_layouts.hidden_lines([check]) == [
        "affine: 2 hidden trailing parameter(s) @32:8 @40:8 after the catalog fields, left to "
        "the runtime (a compiler's workspace, tiling or synchronisation address)"]
    assert "+ 2 hidden trailing parameter(s) @32:8 @40:8" in kernel_layouts.table([check])[0]


@pytest.mark.parametrize("extra,fragment", [
    (((28, 8),), "parameter 5 at offset 28 is not in the struct, and is no hidden trailing "
                 "parameter (it overlaps the parameter before it (ends at 32))"),
    (((32, 4),), "parameter 5 at offset 32 is not in the struct, and is no hidden trailing "
                 "parameter (size 4 is less than a pointer)"),
    (((32, 8), (36, 8)), "parameter 6 at offset 36 is not in the struct"),
])
def test_trailing_parameters_that_are_no_hidden_ones_are_refused(extra, fragment: str) -> None:
    spec = catalog.get("affine")
    check = L.compare(spec, WIDE[:2] + ((16, 4), (20, 4), (24, 8)) + extra)
    assert check.verdict == L.REFUSE and fragment in check.detail, check.detail
    assert check.hidden == ()


def test_strict_refuses_hidden_trailing_parameters_as_before() -> None:
    spec = catalog.get("affine")
    check = L.compare(spec, spec.layout + HIDDEN, strict=True)
    assert check.verdict == L.REFUSE
    assert check.detail == ("affine: the runtime reports 7 parameter(s), the catalog struct has "
                            "5: parameter 5 at offset 32 is not in the struct "
                            "(--kernel-layout strict)")
    assert L.compare(spec, spec.layout, strict=True).verdict == L.SAME


def test_layout_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from mdlri_conformance.backends import kernel_layouts as K
    monkeypatch.delenv(K.MODE_VAR, raising=False)
    assert K.strict_mode() is False
    monkeypatch.setenv(K.MODE_VAR, "strict")
    assert K.strict_mode() is True
    monkeypatch.setenv(K.MODE_VAR, "follow")
    assert K.strict_mode() is False
    monkeypatch.setenv(K.MODE_VAR, "loose")
    with pytest.raises(K.LayoutModeError, match=r"^MDLRI_KERNEL_LAYOUT='loose': use follow or "
                                                r"strict \(--kernel-layout\)$"):
        K.strict_mode()
