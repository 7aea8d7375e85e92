"""The kernels the specs launch: names, argument-struct layouts, numpy semantics.

Every kernel takes one argument struct, passed as packed bytes with C natural alignment
(x86_64/aarch64 LP64): pointers are 8-byte device addresses, scalars are int32. The
same layouts are used by the Ascend C sources (kernel/ascendc/) and the host C versions
(kernel/host/) so that ``TaskSetParams`` on ``args`` means the same thing everywhere.

A runtime may report another layout for a kernel (``aclrtFunctionGetParamInfo``: one
``(offset, size)`` slot per parameter, KRN-02), e.g. a compiler that gives every int32 an
8-byte slot. :func:`install_layout` then makes :func:`get` (and :data:`KERNELS`) hand out the
kernel with those slots, so every ``pack``/``unpack`` of the process follows the runtime;
:mod:`kernel.layout` decides whether a reported layout can be followed. :func:`reset_layouts`
goes back to the C structs.

Semantics are pure functions over a :class:`DeviceMemory` and the decoded argument
values: the whole launch's result, whatever ``numBlocks`` is (KRN-01). The kernels split the
elements by block (kernel/host/, kernel/ascendc/), so every block count gives this result.

Seed pair (scenarios.md S6): ``fallback_main`` (``out[i] = in[i] + 10``) and
``fallback_postprocess`` (``out[i] = in[i] * 2``), 8 x int32, one block.

float32 pair (scenarios.md S1, the ``aclnnAdd`` / ``aclnnMul`` of ``0_simple_model``):
``axpy_f32`` (``out[i] = x[i] + y[i] * alpha``) and ``mul_f32`` (``out[i] = x[i] * y[i]``).
Their data are float32; the scalar ``alpha`` travels as an ``i32`` field holding the float's
bit pattern (:func:`f32_bits`), so the struct is the C ``{float*, float*, float*, int32_t n,
float alpha}`` while every scalar field stays ``i32`` for the generators that draw them.
Arithmetic is IEEE float32 without fused multiply-add, like numpy's.

Two kernels exist for field behaviours and device-side timeouts; they are not drawn by the
generators (conformance/engine/strategies.py):

* ``wait_flag`` ``{int32_t *flag; int32_t *out; int32_t value;}``: waits on the device until
  ``flag[0] != 0``, then writes ``out[0] = value``. Its :attr:`KernelSpec.ready` predicate says
  whether it can run now; a device that cannot wait (numpy) calls :meth:`KernelSpec.run` only
  once it is ready (the body itself writes nothing while the flag is 0). Launched with the
  TIMEOUT / TIMEOUT_US attribute and the flag still 0 when that time has passed, the task ends
  with the task-timeout bit (TMO-10/11).
* ``trap_if`` ``{int32_t *flag}``: raises an AI Core exception (:class:`KernelTrap`) when
  ``flag[0] != 0``, else does nothing (FLD-09/10).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

I32 = np.dtype("<i4")
F32 = np.dtype("<f4")

#: the seed example's element count and constants (scenarios.md S6)
SEED_ELEMENTS = 8
SEED_MAIN_BIAS = 10
SEED_POST_SCALE = 2


class DeviceMemory(Protocol):
    """What a kernel body needs: byte-addressed reads and writes of device memory."""

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """Return a copy of ``nbytes`` bytes at ``addr`` as a uint8 array."""
        ...

    def write(self, addr: int, data: np.ndarray) -> None:
        """Store the bytes of ``data`` at ``addr``."""
        ...


def read_i32(mem: DeviceMemory, addr: int, n: int) -> np.ndarray:
    """Read ``n`` int32 values at ``addr``: always a copy, so a body that writes what it
    read sees the values from before its own write. A memory with ``view_i32(addr, n)`` (a
    live int32 view, or None for a range it does not hold whole) is read through it; any
    other range goes through ``read``, which reports a bad access."""
    view = getattr(mem, "view_i32", None)
    if view is not None:
        v = view(addr, n)
        if v is not None:
            return v.copy()
    return mem.read(addr, 4 * n).view(I32)


def write_i32(mem: DeviceMemory, addr: int, values: np.ndarray) -> None:
    """Write int32 values at ``addr`` (wrapping like C int32 arithmetic), through
    ``view_i32`` where the memory has one (see :func:`read_i32`)."""
    data = np.ascontiguousarray(values, dtype=I32)
    view = getattr(mem, "view_i32", None)
    if view is not None:
        v = view(addr, data.size)
        if v is not None:
            v[:] = data
            return
    mem.write(addr, data.view(np.uint8))


def f32_bits(value: float) -> int:
    """The int32 whose bytes are the float32 ``value`` (how a float scalar is packed)."""
    return int(np.array([value], dtype=F32).view(I32)[0])


def bits_f32(bits: int) -> np.float32:
    """The float32 whose bytes are the int32 ``bits`` (inverse of :func:`f32_bits`)."""
    return np.array([bits], dtype=I32).view(F32)[0]


def read_f32(mem: DeviceMemory, addr: int, n: int) -> np.ndarray:
    """Read ``n`` float32 values at ``addr`` (a view of the copy ``read`` returns)."""
    return mem.read(addr, 4 * n).view(F32)


def write_f32(mem: DeviceMemory, addr: int, values: np.ndarray) -> None:
    """Write float32 values at ``addr``."""
    mem.write(addr, np.ascontiguousarray(values, dtype=F32).view(np.uint8))


@dataclass(frozen=True)
class Field:
    """One member of an argument struct: ``ptr`` (device address) or ``i32``."""

    name: str
    kind: str  # "ptr" | "i32"
    role: str = ""  # "in" | "out" | "inout" for pointers, "" for scalars


#: a parameter's place in the argument bytes: (offset, size) in bytes
Slot = tuple[int, int]
#: the slot sizes the suite can pack a field kind into: a pointer is 8 bytes; an int32 4, or
#: 8 (its value sign-extended, read back from the low 4 bytes: little-endian)
SLOT_SIZES: dict[str, tuple[int, ...]] = {"ptr": (8,), "i32": (4, 8)}


class KernelTrap(Exception):
    """The kernel raised an AI Core exception (``trap_if``; ACL_ERROR_RT_AICORE_EXCEPTION)."""


@dataclass(frozen=True)
class KernelSpec:
    """A catalog entry: the kernel's name, its argument struct and its semantics.

    ``ready`` (optional) says whether a kernel that waits on device memory can run now;
    ``None`` means always ready. ``slots`` (optional) places each field at a runtime-reported
    ``(offset, size)``; ``None`` is the C struct (natural alignment)."""

    name: str
    fields: tuple[Field, ...]
    body: Callable[[DeviceMemory, Mapping[str, int]], None]
    doc: str
    ready: Callable[[DeviceMemory, Mapping[str, int]], bool] | None = None
    slots: tuple[Slot, ...] | None = None
    #: the layout, computed once (every execution of a kernel task decodes its arguments)
    _format: str = field(init=False, repr=False, compare=False)
    _unpack_format: str = field(init=False, repr=False, compare=False)
    _size: int = field(init=False, repr=False, compare=False)
    _names: tuple[str, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        slots = natural_slots(self.fields) if self.slots is None else tuple(self.slots)
        fmt, unpack_fmt = _formats(self.name, self.fields, slots)
        object.__setattr__(self, "_format", fmt)
        object.__setattr__(self, "_unpack_format", unpack_fmt)
        object.__setattr__(self, "_size", struct.calcsize(fmt))
        object.__setattr__(self, "_names", tuple(f.name for f in self.fields))

    @property
    def struct_format(self) -> str:
        """``struct`` format of the packed bytes: the slots (C natural alignment unless a
        runtime layout was installed) and tail padding to 8."""
        return self._format

    @property
    def args_size(self) -> int:
        """sizeof the argument bytes (the C struct, or the end of the last slot to 8)."""
        return self._size

    @property
    def layout(self) -> tuple[Slot, ...]:
        """Each field's ``(offset, size)`` in the packed bytes, in field order."""
        return natural_slots(self.fields) if self.slots is None else tuple(self.slots)

    def pack(self, **values: int) -> bytes:
        """Pack named argument values into the struct's bytes."""
        missing = [f.name for f in self.fields if f.name not in values]
        extra = sorted(set(values) - {f.name for f in self.fields})
        if missing or extra:
            raise ValueError(f"{self.name}: missing {missing}, unknown {extra}")
        return struct.pack(self._format, *(int(values[n]) for n in self._names))

    def unpack(self, data: bytes) -> dict[str, int]:
        """Decode argument bytes into named values (an int32 in an 8-byte slot is its low 4
        bytes)."""
        raw = data if type(data) is bytes and len(data) == self._size \
            else bytes(data[: self._size])  # exact bytes, the simulator's every run: no copy
        return dict(zip(self._names, struct.unpack(self._unpack_format, raw)))

    def run(self, mem: DeviceMemory, args: bytes) -> None:
        """Execute the kernel's semantics on ``mem`` with packed ``args``."""
        self.body(mem, self.unpack(args))

    def is_ready(self, mem: DeviceMemory, args: bytes) -> bool:
        """Whether the kernel can run now (always, unless it has a ``ready`` predicate)."""
        return True if self.ready is None else bool(self.ready(mem, self.unpack(args)))


def natural_slots(fields: Sequence[Field]) -> tuple[Slot, ...]:
    """Each field's ``(offset, size)`` in the C struct (natural alignment, LP64)."""
    out: list[Slot] = []
    offset = 0
    for f in fields:
        size = 8 if f.kind == "ptr" else 4
        offset += (-offset) % size
        out.append((offset, size))
        offset += size
    return tuple(out)


def _formats(name: str, fields: Sequence[Field], slots: Sequence[Slot]) -> tuple[str, str]:
    """The ``struct`` formats (pack, unpack) of fields placed at ``slots``, tail padding to 8;
    ValueError when a slot cannot hold its field or overlaps the one before it."""
    if len(slots) != len(fields):
        raise ValueError(f"{name}: {len(slots)} slots for {len(fields)} fields")
    pack = unpack = "<"
    pos = 0
    for f, (offset, size) in zip(fields, slots):
        if size not in SLOT_SIZES[f.kind] or offset < pos:
            raise ValueError(f"{name}: field {f.name} ({f.kind}) cannot take slot "
                             f"{offset}:{size} (after byte {pos})")
        pack += "x" * (offset - pos)
        unpack += "x" * (offset - pos)
        if f.kind == "ptr":
            pack, unpack = pack + "Q", unpack + "Q"
        elif size == 8:
            pack, unpack = pack + "q", unpack + "i4x"
        else:
            pack, unpack = pack + "i", unpack + "i"
        pos = offset + size
    tail = "x" * ((-pos) % 8)
    return pack + tail, unpack + tail


# ---------------------------------------------------------------------------------------------
# Bodies


def _fallback_main(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_i32(mem, a["input"], SEED_ELEMENTS)
    write_i32(mem, a["output"], x + SEED_MAIN_BIAS)


def _fallback_postprocess(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_i32(mem, a["input"], SEED_ELEMENTS)
    write_i32(mem, a["output"], x * SEED_POST_SCALE)


def _affine(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_i32(mem, a["x"], a["n"])
    write_i32(mem, a["y"], x * np.int32(a["a"]) + np.int32(a["b"]))


def _add(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_i32(mem, a["a"], a["n"])
    y = read_i32(mem, a["b"], a["n"])
    write_i32(mem, a["out"], x + y)


def _accumulate(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    acc = read_i32(mem, a["acc"], a["n"])
    x = read_i32(mem, a["x"], a["n"])
    write_i32(mem, a["acc"], acc + x)


def _fill(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    write_i32(mem, a["out"], np.full(a["n"], a["value"], dtype=I32))


def _copy(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    write_i32(mem, a["dst"], read_i32(mem, a["src"], a["n"]))


def _axpy_f32(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_f32(mem, a["x"], a["n"])
    y = read_f32(mem, a["y"], a["n"])
    with np.errstate(all="ignore"):
        write_f32(mem, a["out"], x + y * bits_f32(a["alpha"]))


def _mul_f32(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    x = read_f32(mem, a["x"], a["n"])
    y = read_f32(mem, a["y"], a["n"])
    with np.errstate(all="ignore"):
        write_f32(mem, a["out"], x * y)


def _flag_set(mem: DeviceMemory, a: Mapping[str, int]) -> bool:
    return int(read_i32(mem, a["flag"], 1)[0]) != 0


def _wait_flag(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    if _flag_set(mem, a):
        write_i32(mem, a["out"], np.array([a["value"]], dtype=I32))


def _trap_if(mem: DeviceMemory, a: Mapping[str, int]) -> None:
    if _flag_set(mem, a):
        raise KernelTrap(f"trap_if: flag {int(read_i32(mem, a['flag'], 1)[0])} != 0")


def _p(name: str, role: str) -> Field:
    return Field(name, "ptr", role)


def _i(name: str) -> Field:
    return Field(name, "i32")


KERNELS: dict[str, KernelSpec] = {
    k.name: k
    for k in (
        KernelSpec("fallback_main", (_p("input", "in"), _p("output", "out")), _fallback_main,
                   "output[i] = input[i] + 10 over 8 x int32 (seed example)"),
        KernelSpec("fallback_postprocess", (_p("input", "in"), _p("output", "out")),
                   _fallback_postprocess,
                   "output[i] = input[i] * 2 over 8 x int32 (seed example)"),
        KernelSpec("affine", (_p("x", "in"), _p("y", "out"), _i("n"), _i("a"), _i("b")), _affine,
                   "y[i] = a * x[i] + b"),
        KernelSpec("add", (_p("a", "in"), _p("b", "in"), _p("out", "out"), _i("n")), _add,
                   "out[i] = a[i] + b[i]"),
        KernelSpec("accumulate", (_p("acc", "inout"), _p("x", "in"), _i("n")), _accumulate,
                   "acc[i] += x[i]"),
        KernelSpec("fill", (_p("out", "out"), _i("n"), _i("value")), _fill,
                   "out[i] = value"),
        KernelSpec("copy", (_p("src", "in"), _p("dst", "out"), _i("n")), _copy,
                   "dst[i] = src[i]"),
        KernelSpec("axpy_f32", (_p("x", "in"), _p("y", "in"), _p("out", "out"), _i("n"),
                                _i("alpha")), _axpy_f32,
                   "out[i] = x[i] + y[i] * alpha over float32 (alpha: f32_bits; aclnnAdd)"),
        KernelSpec("mul_f32", (_p("x", "in"), _p("y", "in"), _p("out", "out"), _i("n")),
                   _mul_f32, "out[i] = x[i] * y[i] over float32 (aclnnMul)"),
        KernelSpec("wait_flag", (_p("flag", "in"), _p("out", "out"), _i("value")), _wait_flag,
                   "waits until flag[0] != 0, then out[0] = value (device-side task timeout)",
                   ready=_flag_set),
        KernelSpec("trap_if", (_p("flag", "in"),), _trap_if,
                   "raises an AI Core exception when flag[0] != 0, else does nothing"),
    )
}

#: catalog kernels that are not data kernels (waiting, faulting): generators must not draw them
SPECIAL_KERNELS: frozenset[str] = frozenset({"wait_flag", "trap_if"})


#: the kernels with their C structs, whatever layout is installed
NATURAL: dict[str, KernelSpec] = dict(KERNELS)


def get(name: str) -> KernelSpec:
    """Look a kernel up by name; KeyError names the known ones."""
    try:
        return KERNELS[name]
    except KeyError:
        raise KeyError(f"unknown kernel {name!r}; known: {', '.join(KERNELS)}") from None


def install_layout(name: str, slots: Sequence[Slot]) -> KernelSpec:
    """Make kernel ``name`` pack and unpack its fields at ``slots`` in this process (what the
    runtime reported, KRN-02); the C struct's own slots restore it. ValueError for slots the
    fields cannot take (:func:`kernel.layout.compare` refuses those first)."""
    natural = NATURAL[name]
    slots = tuple((int(o), int(s)) for o, s in slots)
    spec = natural if slots == natural.layout else replace(natural, slots=slots)
    KERNELS[name] = spec
    return spec


def reset_layouts() -> None:
    """Every kernel back to its C struct."""
    KERNELS.update(NATURAL)


def installed_layouts() -> dict[str, tuple[Slot, ...]]:
    """The kernels whose installed layout is not the C struct, with their slots."""
    return {n: k.layout for n, k in KERNELS.items() if k.slots is not None}
