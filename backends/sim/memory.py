"""Simulated device memory (a flat 64-bit address space) and pinned host memory.

Device memory implements :class:`kernel.catalog.DeviceMemory`: ``read``/``write`` by plain
``int`` address. Allocations are 64-byte aligned, separated by unmapped guard gaps, never
reused (addresses only grow, so a use-after-free always faults), and **not zeroed**: each new
allocation is filled with a deterministic garbage byte (abi.md §3.3 "not zeroed"), so a spec
cannot rely on fresh memory reading 0.

An access outside every live allocation raises :class:`DeviceAccessError`. Host-side API calls
check ranges first and return 107000; inside the progress engine the exception is turned into a
device error (see :mod:`backends.sim.device`).

Host memory is plain numpy arrays. ``aclrtMallocHost`` buffers are registered as *pinned*
by the address range of their data; any array whose bytes lie inside a registered range (a view
of a pinned buffer included) counts as pinned (MODE-01, MODE-14).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: first device address handed out
DEFAULT_BASE = 0x12C0_4000_0000
#: alignment of every allocation (abi.md §3.3)
ALIGN = 64
#: unmapped bytes between two allocations
DEFAULT_GUARD = 4096
#: byte every fresh allocation is filled with
DEFAULT_FILL = 0xA5
_I32 = np.dtype("<i4")


class DeviceAccessError(RuntimeError):
    """A device access that touches bytes outside every live allocation."""


@dataclass(eq=False)
class Allocation:
    """One device allocation: ``[base, base + size)`` backed by a bytearray ``raw`` and
    ``data``, a uint8 numpy array over the same bytes (whole-array work goes through
    ``data``; the 8-byte loads and stores and the argument reads of every executed task go
    through ``raw``, which costs a fraction of a numpy call)."""

    base: int
    size: int
    raw: bytearray
    owner: str = "user"  # "user" (aclrtMalloc) | "internal" (runtime copies of kernel args)
    data: np.ndarray = field(init=False, repr=False)
    end: int = field(init=False, repr=False)
    #: int32 view of the whole 4-byte words (made on first use, MemorySpace.view_i32)
    i32: "np.ndarray | None" = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        self.data = np.frombuffer(self.raw, dtype=np.uint8)
        self.end = self.base + self.size


def _align_up(value: int, align: int) -> int:
    return (value + align - 1) // align * align


class DeviceMemorySpace:
    """The flat device address space (implements ``kernel.catalog.DeviceMemory``)."""

    def __init__(self, base: int = DEFAULT_BASE, guard: int = DEFAULT_GUARD,
                 fill: int = DEFAULT_FILL) -> None:
        self._next = _align_up(base, ALIGN)
        self._guard = max(int(guard), ALIGN)
        self._fill = int(fill) & 0xFF
        self._bases: list[int] = []
        self._allocs: dict[int, Allocation] = {}
        #: the allocation the last access found (tasks of one execution mostly touch the
        #: same few buffers); reset whenever an allocation goes
        self._last: Allocation | None = None
        #: (addr, nbytes) -> uint8 view of a range that lies in one live allocation (the
        #: buffers the tasks of an execution touch again and again); dropped whenever an
        #: allocation goes, so a view is never handed out for freed memory
        self._views: dict[tuple[int, int], np.ndarray] = {}
        self._views_i32: dict[tuple[int, int], np.ndarray] = {}  # (addr, count) -> int32 view
        #: changes whenever an allocation comes or goes (what a view prepared earlier may
        #: rely on: backends.sim.fastkernels)
        self.layout = 0
        #: changes whenever an allocation goes (a range found in a live allocation stays
        #: valid until then: allocations never move and addresses are never reused)
        self.frees = 0

    # -- allocation ------------------------------------------------------------------------
    def alloc(self, size: int, owner: str = "user") -> int:
        """Reserve ``size`` (> 0) bytes and return the 64-byte aligned base address."""
        if size <= 0:
            raise ValueError("allocation size must be > 0")
        base = self._next
        self._allocs[base] = Allocation(base, size, bytearray(bytes((self._fill,)) * size),
                                        owner)
        bisect.insort(self._bases, base)
        self.layout += 1
        self._next = _align_up(base + size + self._guard, ALIGN)
        return base

    def free(self, base: int) -> bool:
        """Release the allocation starting exactly at ``base``; False if there is none."""
        alloc = self._allocs.pop(base, None)
        if alloc is None:
            return False
        self._last = None
        self.layout += 1
        self.frees += 1
        self._views.clear()
        self._views_i32.clear()
        i = bisect.bisect_left(self._bases, base)
        del self._bases[i]
        return True

    def is_base(self, addr: int) -> bool:
        """True if ``addr`` is the start of a live allocation."""
        return addr in self._allocs

    def find(self, addr: int) -> Allocation | None:
        """The live allocation containing ``addr`` (or None)."""
        last = self._last
        if last is not None and last.base <= addr < last.end:
            return last
        i = bisect.bisect_right(self._bases, addr) - 1
        if i < 0:
            return None
        alloc = self._allocs[self._bases[i]]
        if alloc.base <= addr < alloc.end:
            self._last = alloc
            return alloc
        return None

    def valid_range(self, addr: int, nbytes: int) -> bool:
        """True if ``[addr, addr + nbytes)`` lies inside one live allocation."""
        if not isinstance(addr, (int, np.integer)) or isinstance(addr, bool):
            return False
        alloc = self.find(int(addr))
        return alloc is not None and int(addr) + max(int(nbytes), 0) <= alloc.end

    def count(self, owner: str | None = None) -> int:
        """Number of live allocations (of one owner kind, or all)."""
        return sum(1 for a in self._allocs.values() if owner is None or a.owner == owner)

    def clear(self) -> None:
        """Drop every allocation (backend close)."""
        self._allocs.clear()
        self._bases.clear()
        self._last = None
        self.layout += 1
        self.frees += 1
        self._views.clear()
        self._views_i32.clear()

    # -- access (kernel.catalog.DeviceMemory) ----------------------------------------------
    def _locate(self, addr: int, nbytes: int) -> tuple[Allocation, int]:
        """The allocation holding ``[addr, addr + nbytes)`` and the offset of ``addr`` in it;
        :class:`DeviceAccessError` when no live allocation holds the whole range."""
        last = self._last
        if (last is not None and type(addr) is int and type(nbytes) is int
                and last.base <= addr < last.end and 0 <= nbytes <= last.end - addr):
            return last, addr - last.base  # the common case: the allocation found last time
        addr = int(addr)
        nbytes = int(nbytes)
        alloc = self.find(addr)
        if alloc is None or addr + nbytes > alloc.end or nbytes < 0:
            raise DeviceAccessError(
                f"device access of {nbytes} bytes at {addr:#x} is outside every live allocation"
                + (f" (nearest allocation {alloc.base:#x}+{alloc.size})" if alloc else ""))
        return alloc, addr - alloc.base

    def _span(self, addr: Any, nbytes: Any) -> tuple[Allocation, int] | None:
        """(allocation, offset) when one live allocation holds ``[addr, addr + nbytes)``,
        else None (never raises, unlike :meth:`_locate`)."""
        if type(addr) is not int or type(nbytes) is not int or nbytes < 0:
            return None
        alloc = self.find(addr)
        if alloc is None or addr + nbytes > alloc.end:
            return None
        return alloc, addr - alloc.base

    @staticmethod
    def _keep(cache: dict[tuple[int, int], np.ndarray], key: tuple[int, int],
              v: np.ndarray) -> np.ndarray:
        if len(cache) >= 4096:
            cache.clear()
        cache[key] = v
        return v

    def view(self, addr: int, nbytes: int) -> np.ndarray | None:
        """A writable uint8 view of ``[addr, addr + nbytes)`` when one live allocation holds
        it, else None (never raises: the caller then takes the path that reports the bad
        access exactly as :meth:`read` / :meth:`write` do). Valid until the next free."""
        key = (addr, nbytes)
        v = self._views.get(key)
        if v is not None:
            return v
        span = self._span(addr, nbytes)
        if span is None:
            return None
        alloc, off = span
        return self._keep(self._views, key, alloc.data[off:off + nbytes])

    def view_i32(self, addr: int, count: int) -> np.ndarray | None:
        """:meth:`view` of ``count`` little-endian int32 values (the catalog kernels' data),
        or None."""
        key = (addr, count)
        v = self._views_i32.get(key)
        if v is not None:
            return v
        span = self._span(addr, 4 * count if type(count) is int else count)
        if span is None:
            return None
        alloc, off = span
        if off & 3:
            v = alloc.data[off:off + 4 * count].view(_I32)
        else:  # a slice of the allocation's int32 view (a cheaper numpy call than .view)
            whole = alloc.i32
            if whole is None:
                whole = alloc.i32 = alloc.data[:alloc.size & ~3].view(_I32)
            off >>= 2
            v = whole[off:off + count]
        return self._keep(self._views_i32, key, v)

    def bytes_view(self, addr: Any, nbytes: Any) -> memoryview | None:
        """A writable memoryview of the bytes ``[addr, addr + nbytes)`` when one live
        allocation holds them, else None (never raises). Valid until that allocation is
        freed (:attr:`frees`)."""
        span = self._span(addr, nbytes)
        if span is None:
            return None
        alloc, off = span
        return memoryview(alloc.raw)[off:off + nbytes]

    def _slice(self, addr: int, nbytes: int) -> np.ndarray:
        alloc, off = self._locate(addr, nbytes)
        return alloc.data[off:off + nbytes]

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        """Return a copy of ``nbytes`` bytes at ``addr`` as a uint8 array."""
        return self._slice(addr, nbytes).copy()

    def read_bytes(self, addr: int, nbytes: int) -> bytes:
        """The ``nbytes`` bytes at ``addr`` as ``bytes`` (what :meth:`read` returns, without
        the numpy array: a kernel task's argument struct)."""
        alloc, off = self._locate(addr, nbytes)
        return bytes(alloc.raw[off:off + int(nbytes)])

    def raw_at(self, addr: int) -> tuple[bytearray, int]:
        """The bytes of the live allocation holding ``addr`` and the offset of ``addr`` in
        them (valid while :attr:`layout` stays the same); :class:`DeviceAccessError` outside
        every allocation."""
        alloc, off = self._locate(addr, 0)
        return alloc.raw, off

    def write(self, addr: int, data: np.ndarray | bytes) -> None:
        """Store the bytes of ``data`` at ``addr``."""
        raw = as_bytes_view(data) if isinstance(data, np.ndarray) else np.frombuffer(
            bytes(data), dtype=np.uint8)
        self._slice(addr, raw.size)[:] = raw

    def read_u64(self, addr: int) -> int:
        """64-bit little-endian load."""
        alloc, off = self._locate(addr, 8)
        return int.from_bytes(alloc.raw[off:off + 8], "little")

    def write_u64(self, addr: int, value: int) -> None:
        """64-bit little-endian store (value wrapped to uint64)."""
        alloc, off = self._locate(addr, 8)
        alloc.raw[off:off + 8] = (int(value) & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")

    def fill(self, addr: int, value: int, nbytes: int) -> None:
        """memset semantics: ``nbytes`` bytes at ``addr`` set to ``value & 0xFF``."""
        self._slice(addr, nbytes)[:] = int(value) & 0xFF


# ---------------------------------------------------------------------------------------------
# Host memory


def data_ptr(arr: np.ndarray) -> int:
    """Address of the first byte of a numpy array."""
    return int(arr.__array_interface__["data"][0])


def as_bytes_view(arr: np.ndarray) -> np.ndarray:
    """A flat writable-if-possible uint8 view of a C-contiguous array's bytes."""
    if not arr.flags.c_contiguous:
        raise ValueError("host buffers must be C-contiguous")
    if arr.ndim == 0:
        arr = arr.reshape(1)
    return arr.reshape(-1).view(np.uint8)


@dataclass
class PinnedRegistry:
    """Pinned host buffers from ``aclrtMallocHost``, tracked by their data address range."""

    _buffers: dict[int, np.ndarray] = field(default_factory=dict)

    def alloc(self, size: int) -> np.ndarray:
        """A new pinned uint8 buffer (filled with garbage like device memory)."""
        arr = np.full(size, DEFAULT_FILL, dtype=np.uint8)
        self._buffers[data_ptr(arr)] = arr
        return arr

    def free(self, arr: np.ndarray) -> bool:
        """Unregister the buffer whose data starts where ``arr``'s does."""
        if not isinstance(arr, np.ndarray):
            return False
        return self._buffers.pop(data_ptr(arr), None) is not None

    def is_pinned(self, arr: np.ndarray) -> bool:
        """True if every byte of ``arr`` lies inside one registered pinned buffer."""
        if not self._buffers:
            return False
        start = data_ptr(arr)
        end = start + arr.nbytes
        for base, buf in self._buffers.items():
            if base <= start and end <= base + buf.nbytes:
                return True
        return False

    def count(self) -> int:
        return len(self._buffers)

    def clear(self) -> None:
        self._buffers.clear()
