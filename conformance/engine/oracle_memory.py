"""The oracle's memory: the case's device buffers and words at fake addresses, byte
addressed, and its pinned host buffers (reached only by copies, by index). Memsets fill bytes
of a buffer (at any offset and count), copies move between regions of one size in the
capturable directions (MODE-01), and an access outside every region makes the case
undefined. Part of the independent oracle (:mod:`conformance.engine.oracle`).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .graphs import WORD_MASK
from .oracle_state import UndefinedCase

BUF_BASE = 0x1000_0000


BUF_STRIDE = 0x0010_0000


WORD_BASE = 0x7000_0000


WORD_STRIDE = 64


class OracleMemory:
    """A byte-addressed memory holding the case's buffers and words at fake addresses, and
    its pinned host buffers (reached only by copies, by index).

    Implements :class:`kernel.catalog.DeviceMemory`; an access outside a region raises
    :class:`~conformance.engine.oracle_state.UndefinedCase`.
    """

    def __init__(self, buffers: Iterable[Iterable[int]], words: Iterable[int],
                 hosts: Iterable[Iterable[int]] = ()) -> None:
        self._bufs = [_int32_bytes(b) for b in buffers]
        self._words = [np.array([int(w) & WORD_MASK], dtype=np.uint64).view(np.uint8).copy()
                       for w in words]
        self._hosts = [_int32_bytes(h) for h in hosts]

    @staticmethod
    def buffer_addr(b: int) -> int:
        return BUF_BASE + b * BUF_STRIDE

    @staticmethod
    def word_addr(w: int) -> int:
        return WORD_BASE + w * WORD_STRIDE

    def _region(self, addr: int, nbytes: int) -> tuple[np.ndarray, int]:
        if addr >= WORD_BASE:
            w, off = divmod(addr - WORD_BASE, WORD_STRIDE)
            regions, idx = self._words, w
        else:
            idx, off = divmod(addr - BUF_BASE, BUF_STRIDE)
            regions = self._bufs
        if addr < BUF_BASE or not 0 <= idx < len(regions) or off + nbytes > len(regions[idx]):
            raise UndefinedCase(f"access of {nbytes} bytes at {addr:#x} is outside every buffer")
        return regions[idx], off

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        region, off = self._region(addr, nbytes)
        return region[off:off + nbytes].copy()

    def write(self, addr: int, data: np.ndarray) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        region, off = self._region(addr, len(raw))
        region[off:off + len(raw)] = raw

    # -- convenience -----------------------------------------------------------------------
    def buffer(self, b: int) -> list[int]:
        """Buffer ``b`` as int32 values."""
        return [int(v) for v in self._bufs[b].view(np.int32)]

    def word(self, w: int) -> int:
        """Word ``w`` as an unsigned 64-bit value."""
        return int(self._words[w].view(np.uint64)[0])

    def set_word(self, w: int, value: int) -> None:
        self._words[w][:] = np.array([value & WORD_MASK], dtype=np.uint64).view(np.uint8)

    def fill_bytes(self, b: int, value: int, offset: int = 0, count: int | None = None) -> None:
        """Set ``count`` bytes (default: every byte) of buffer ``b`` from byte ``offset`` to
        ``value & 0xFF``, and no other byte (aclrtMemsetAsync, RT-45)."""
        end = self._bufs[b].size if count is None else offset + count
        self._bufs[b][offset:end] = value & 0xFF

    def copy_buffer(self, src: int, dst: int) -> None:
        """Copy buffer ``src`` over buffer ``dst`` (aclrtMemcpyAsync DEVICE_TO_DEVICE)."""
        self._bufs[dst][:] = self._bufs[src]

    def copy(self, kind: str, src: int, dst: int) -> None:
        """A captured copy of ``kind`` "d2d" (buffer to buffer), "h2d" (pinned host buffer to
        buffer) or "d2h" (buffer to pinned host buffer), whole regions of one size."""
        src_pool = self._hosts if kind == "h2d" else self._bufs
        dst_pool = self._hosts if kind == "d2h" else self._bufs
        if src_pool[src].size != dst_pool[dst].size:
            raise UndefinedCase(f"a {kind} copy between regions of different sizes")
        dst_pool[dst][:] = src_pool[src]

    def host(self, h: int) -> list[int]:
        """Pinned host buffer ``h`` as int32 values."""
        return [int(v) for v in self._hosts[h].view(np.int32)]

    def fill_host(self, h: int, value: int) -> None:
        """Store ``value`` into every int32 element of pinned host buffer ``h``."""
        self._hosts[h].view(np.int32)[:] = np.int64(value).astype(np.int32)

    def buffers(self) -> list[list[int]]:
        return [self.buffer(b) for b in range(len(self._bufs))]

    def words(self) -> list[int]:
        return [self.word(w) for w in range(len(self._words))]

    def hosts(self) -> list[list[int]]:
        return [self.host(h) for h in range(len(self._hosts))]


def _int32_bytes(values: Iterable[int]) -> np.ndarray:
    """The bytes of ``values`` as int32 (wrapped), a writable uint8 array."""
    return np.asarray(list(values), dtype=np.int64).astype(np.int32).view(np.uint8).copy()
