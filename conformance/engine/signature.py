"""Task signatures: the one encoding that identifies a captured op's task in a listing.

A signature is a tuple whose first item is the task's kind, then what GetParams shows of it:

* ``("kernel", name, args)``: the catalog kernel's name (its function handle, GETP-03) and
  the packed argument struct (device addresses of the buffers, GETP-03, GETP-05);
* ``("value_write", dev_addr, value)`` and ``("value_wait", dev_addr, value, flag)``, values
  as unsigned 64-bit words;
* ``("record",)`` and ``("wait",)``: event tasks carry only their event (TYPE-02);
* ``("unknown", type)``: a listed task of a type no op gives, or whose GetParams answered
  without the member of its type.

Memset ops give DEFAULT tasks that GetParams cannot identify (GETP-01) and EVENT_RESET tasks
are internal: they have no signature (None). :func:`of_op` says what a conforming runtime
shows for an op, :func:`of_task` what a listed task shows; the runner (matching tasks to a
case's ops) and the stateful machine (checking the listing, LIST-08) compare the two.

Signatures get coarser when the runtime cannot show more (:data:`LEVELS`, :func:`coarse`):
without data movement the argument bytes cannot be read from the device (kernel name only),
and when GetParams does not answer only the kind is left.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from mdlri_conformance.backends.contract import KernelTaskParams, TaskParams, TaskType
from mdlri_conformance.kernel import catalog

from .graphs import WORD_MASK, Launch, Op, Record, ValueWait, ValueWrite, Wait, pack_launch

Sig = tuple[Any, ...]

#: signature levels, finest first: full (kernel args from the device), no-args (the kernel
#: name only: data does not move), type (the kind alone: GetParams does not answer)
LEVELS = ("full", "no-args", "type")

#: the user-visible task types and their kinds (TYPE-02)
KINDS: dict[int, str] = {TaskType.KERNEL: "kernel", TaskType.EVENT_RECORD: "record",
                         TaskType.EVENT_WAIT: "wait", TaskType.VALUE_WRITE: "value_write",
                         TaskType.VALUE_WAIT: "value_wait"}
#: listed task types that no user op is matched to (memsets, internal event resets)
HIDDEN = frozenset({TaskType.DEFAULT, TaskType.EVENT_RESET})
#: kinds whose signature is the kind alone (GetParams is not asked)
_KIND_ONLY = frozenset({TaskType.EVENT_RECORD, TaskType.EVENT_WAIT})


def of_op(op: Op, buffer_addr: Callable[[int], int],
          word_addr: Callable[[int], int]) -> Sig | None:
    """The full signature of an op's task, with buffers and words at the given device
    addresses (None for a memset: a DEFAULT task)."""
    if isinstance(op, Launch):
        return ("kernel", op.kernel, pack_launch(op, buffer_addr))
    if isinstance(op, Record):
        return ("record",)
    if isinstance(op, Wait):
        return ("wait",)
    if isinstance(op, ValueWrite):
        return ("value_write", word_addr(op.word), op.value & WORD_MASK)
    if isinstance(op, ValueWait):
        return ("value_wait", word_addr(op.word), op.value & WORD_MASK, op.flag)
    return None


def asks_params(ttype: int) -> bool:
    """Whether a listed task of type ``ttype`` is identified through GetParams (every type
    but the hidden ones and the event record/wait)."""
    return ttype not in HIDDEN and ttype not in _KIND_ONLY


def of_task(ttype: int, params: TaskParams | None, function_name: Callable[[Any], str],
            args: Callable[[KernelTaskParams], bytes | None]) -> Sig | None:
    """A listed task's signature from its GetType and GetParams (``params`` None: GetParams
    was not asked or did not answer, the kind alone). ``function_name`` names a kernel's
    function handle; ``args`` gives its argument bytes, None when they cannot be read (the
    signature is then the kernel name only: see :func:`kernel_args`)."""
    if ttype in HIDDEN:
        return None
    kind = KINDS.get(ttype)
    if kind is None:
        return ("unknown", int(ttype))
    if ttype in _KIND_ONLY or params is None:
        return (kind,)
    if ttype == TaskType.KERNEL and params.kernel is not None:
        data = args(params.kernel)
        name = function_name(params.kernel.func_handle)
        return ("kernel", name) if data is None else ("kernel", name, data)
    if ttype == TaskType.VALUE_WRITE and params.value_write is not None:
        return ("value_write", params.value_write.dev_addr, params.value_write.value & WORD_MASK)
    if ttype == TaskType.VALUE_WAIT and params.value_wait is not None:
        w = params.value_wait
        return ("value_wait", w.dev_addr, w.value & WORD_MASK, w.flag)
    return ("unknown", int(ttype))


def kernel_args(k: KernelTaskParams,
                read: Callable[[int, int], bytes] | None) -> bytes | None:
    """The argument bytes of a kernel task: host bytes as given (``argsSize`` of them), else
    ``read(device address, size)`` (GETP-03); None when ``read`` is None (data does not
    move); empty for a NULL or empty argument block."""
    if isinstance(k.args, (bytes, bytearray)):
        return bytes(k.args[:k.args_size])
    if read is None:
        return None
    if not k.args or k.args_size <= 0:
        return b""
    return read(int(k.args), k.args_size)


def coarse(sig: Sig | None, level: str) -> Sig | None:
    """``sig`` at signature ``level`` (see :data:`LEVELS`)."""
    if sig is None or level == "full":
        return sig
    if level == "type":
        return sig[:1]
    return sig[:2] if sig[0] == "kernel" else sig


def coarser(a: str, b: str) -> str:
    """The coarser of two levels."""
    return max(a, b, key=LEVELS.index)


def describe(sig: Sig, buffer_addrs: Sequence[int], word_addrs: Sequence[int]) -> str:
    """A readable signature: the type name, a kernel's name with its decoded arguments
    (buffers as ``b<i>``), a value write's word (``w<i>``) and value."""
    ttype = next((t for t, k in KINDS.items() if k == sig[0]), None)
    name = TaskType(ttype).name if ttype is not None else str(sig[0])
    if sig[0] == "value_write" and len(sig) == 3:
        word = {a: f"w{w}" for w, a in enumerate(word_addrs)}.get(sig[1], hex(sig[1] or 0))
        return f"{name} {word}={sig[2]}"
    if sig[0] != "kernel" or len(sig) != 3 or sig[1] not in catalog.KERNELS:
        return name if len(sig) == 1 else f"{name} {sig[1:]!r}"
    spec = catalog.get(sig[1])
    try:
        vals = spec.unpack(sig[2])
    except Exception:  # short or malformed args: show the raw bytes
        return f"{name} {sig[1]} args={sig[2].hex()}"
    names = {addr: f"b{b}" for b, addr in enumerate(buffer_addrs)}
    shown = ",".join(
        f"{f.name}={names.get(vals[f.name], vals[f.name]) if f.kind == 'ptr' else vals[f.name]}"
        for f in spec.fields)
    return f"{name} {sig[1]}({shown})"
