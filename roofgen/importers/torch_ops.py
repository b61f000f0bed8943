"""Operator kinds and shapes from the shapes ``torch.profiler`` records
(``record_shapes=True``: each op's ``args["Input Dims"]`` and ``args["Input type"]``).

Only the op a kernel was launched from is read (the innermost one), never an op
around it: ``aten::linear`` launches its kernels through ``aten::addmm`` (or
``aten::mm``), so the GEMM is counted once, on ``addmm``. GEMMs (``mm``, ``addmm``,
``bmm``, ``baddbmm``, ``matmul``, ``linear``), attention (``scaled_dot_product_attention``
and the flash, efficient and cuDNN kernels' ops) and layer and RMS norms have a
model; other ops, and compiled code (Triton kernels from ``torch.compile``, whose
ops record no shapes an operator model can read), do not: their FLOPs stay unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from roofgen.importers.trace_case import Operator

__all__ = ["MAX_DIM", "ShapeError", "operator_of"]

#: The largest size a shape may give (2**53: past it a float, as JSON and the spec
#: hold numbers, no longer tells neighbouring integers apart; no tensor comes near).
MAX_DIM = 2**53


class ShapeError(ValueError):
    """Recorded shapes an op cannot have (a negative or boolean size, one beyond
    :data:`MAX_DIM`): the message says which."""


#: ``Input type`` names torch records, as roofgen dtypes.
DTYPES = {
    "float": "fp32",
    "double": "fp64",
    "c10::Half": "fp16",
    "c10::BFloat16": "bf16",
    "c10::Float8_e4m3fn": "fp8-e4m3",
    "c10::Float8_e5m2": "fp8-e5m2",
    "int": "int32",
    "signed char": "int8",
}

_Dims = Sequence[Any]
_Shape = tuple[str, dict[str, int]] | None


def _dims(value: Any) -> list[int] | None:
    """A tensor's sizes, or None when ``value`` is no tensor's shape or holds a 0 (an
    empty tensor: nothing to model). Sizes a tensor cannot have raise ShapeError."""
    if not isinstance(value, list):
        return None
    for d in value:
        if isinstance(d, bool):
            raise ShapeError(f"Input Dims holds {str(d).lower()} where a size belongs")
        if isinstance(d, int) and not 0 <= d <= MAX_DIM:
            shown = str(d) if len(str(d)) <= 24 else f"{str(d)[:20]}... ({len(str(d))} digits)"
            raise ShapeError(f"Input Dims holds a size of {shown}: a size is 0 to 2**53")
    if all(isinstance(d, int) and d > 0 for d in value):
        return list(value)
    return None


def _gemm2(a: _Dims, b: _Dims) -> _Shape:
    x, y = _dims(a), _dims(b)
    if x and y and len(x) == 2 and len(y) == 2 and x[1] == y[0]:
        return "gemm", {"m": x[0], "n": y[1], "k": x[1]}
    return None


def _bgemm(a: _Dims, b: _Dims) -> _Shape:
    x, y = _dims(a), _dims(b)
    if x and y and len(x) == 3 and len(y) == 3 and x[0] == y[0] and x[2] == y[1]:
        return "batched-gemm", {"batch": x[0], "m": x[1], "n": y[2], "k": x[2]}
    return None


def _mm(d: _Dims) -> _Shape:
    return _gemm2(d[0], d[1]) if len(d) >= 2 else None


def _addmm(d: _Dims) -> _Shape:
    return _gemm2(d[1], d[2]) if len(d) >= 3 else None


def _bmm(d: _Dims) -> _Shape:
    return _bgemm(d[0], d[1]) if len(d) >= 2 else None


def _baddbmm(d: _Dims) -> _Shape:
    return _bgemm(d[1], d[2]) if len(d) >= 3 else None


def _matmul(d: _Dims) -> _Shape:
    if len(d) < 2:
        return None
    x, y = _dims(d[0]), _dims(d[1])
    if not x or not y:
        return None
    if len(y) == 2 and len(x) >= 2 and x[-1] == y[0]:
        return "gemm", {"m": math.prod(x[:-1]), "n": y[1], "k": y[0]}
    return _bgemm(x, y)


def _linear(d: _Dims) -> _Shape:
    if len(d) < 2:
        return None
    x, w = _dims(d[0]), _dims(d[1])
    if x and w and len(w) == 2 and len(x) >= 1 and x[-1] == w[1]:
        return "gemm", {"m": math.prod(x[:-1]) if len(x) > 1 else 1, "n": w[0], "k": w[1]}
    return None


def _attention(heads_first: bool) -> Callable[[_Dims], _Shape]:
    """q [B, H, Lq, D] and k [B, Hkv, Lkv, D] (SDPA), or [B, L, H, D] (flash and
    efficient attention's forward ops)."""

    def read(d: _Dims) -> _Shape:
        if len(d) < 2:
            return None
        q, k = _dims(d[0]), _dims(d[1])
        if not q or not k or len(q) != 4 or len(k) != 4 or q[0] != k[0] or q[3] != k[3]:
            return None
        if heads_first:
            b, h, lq, hd = q
            hkv, lkv = k[1], k[2]
        else:
            b, lq, h, hd = q
            lkv, hkv = k[1], k[2]
        shape = {"batch": b, "heads": h, "seq_q": lq, "seq_kv": lkv, "head_dim": hd}
        if hkv != h:
            shape["kv_heads"] = hkv
        return "attention", shape

    return read


def _norm(kind: str) -> Callable[[_Dims], _Shape]:
    """input [..., C] with a weight of the normalised shape (else the last dimension)."""

    def read(d: _Dims) -> _Shape:
        x = _dims(d[0]) if d else None
        if not x:
            return None
        weight = _dims(d[2]) if len(d) > 2 else None
        cols = math.prod(weight) if weight else x[-1]
        if cols <= 0 or math.prod(x) % cols:
            return None
        return kind, {"rows": math.prod(x) // cols, "cols": cols}

    return read


#: op name -> (reader of its Input Dims, the dtypes key of its first floating input)
MODELS: dict[str, tuple[Callable[[_Dims], _Shape], str, int]] = {
    "aten::mm": (_mm, "a", 0),
    "aten::addmm": (_addmm, "a", 1),
    "aten::bmm": (_bmm, "a", 0),
    "aten::baddbmm": (_baddbmm, "a", 1),
    "aten::matmul": (_matmul, "a", 0),
    "aten::linear": (_linear, "a", 0),
    "aten::scaled_dot_product_attention": (_attention(True), "q", 0),
    "aten::_scaled_dot_product_flash_attention": (_attention(True), "q", 0),
    "aten::_scaled_dot_product_efficient_attention": (_attention(True), "q", 0),
    "aten::_scaled_dot_product_cudnn_attention": (_attention(True), "q", 0),
    "aten::_flash_attention_forward": (_attention(False), "q", 0),
    "aten::_efficient_attention_forward": (_attention(False), "q", 0),
    "aten::layer_norm": (_norm("layernorm"), "x", 0),
    "aten::native_layer_norm": (_norm("layernorm"), "x", 0),
    "aten::rms_norm": (_norm("rmsnorm"), "x", 0),
    "aten::_fused_rms_norm": (_norm("rmsnorm"), "x", 0),
}


def operator_of(name: str, args: dict[str, Any]) -> Operator | None:
    """The operator an op computes, from its recorded shapes; None when it has no
    model or its shapes are not recorded or not understood."""
    from roofgen.operators.models import operator_model

    entry = MODELS.get(name)
    dims = args.get("Input Dims")
    if entry is None or not isinstance(dims, list):
        return None
    reader, tensor, position = entry
    found = reader(dims)
    if found is None:
        return None
    kind, shape = found
    for key, size in shape.items():
        if size > MAX_DIM:
            raise ShapeError(
                f"Input Dims {_short(dims)} give {kind} {key} = {size:.3g}, more than any "
                "tensor holds (2**53)"
            )
    types = args.get("Input type")
    dtype = None
    if isinstance(types, list) and len(types) > position:
        dtype = DTYPES.get(str(types[position]))
    dtypes = {tensor: dtype} if dtype else {}
    outcome = operator_model(kind, shape, dtypes)
    flop = outcome.model.flop if outcome.model is not None else None
    origin = f"{name} Input Dims {_short(dims)}"
    return Operator(kind, shape, dtypes, origin, flop)


def _short(dims: Any) -> str:
    text = str(dims)
    return text if len(text) <= 200 else text[:197] + "..."
