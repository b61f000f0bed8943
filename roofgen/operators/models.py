"""Operator models: the FLOPs an operator needs and the bytes it must move. Pure.

For each operator kind with a model, the work follows from the shape alone:

* **matrix FLOPs** (multiply-adds counted as 2 FLOP: work the tensor cores can take),
* **vector FLOPs** (other arithmetic, counted at fp32, or fp64 for fp64 data),
* **transcendental OPs** (one exp or rsqrt each),
* **minimum bytes**: the compulsory traffic, each input read once and each output
  written once at its own dtype. Real kernels move more (re-reads, intermediates);
  they can move less only when dirty lines stay in a cache or operands are shared.

These are the operator's needs (model FLOPs), kept apart from what the hardware
executed (padding, masked blocks computed anyway, recomputation).

Each tensor's dtype is read by its name in the kernel's ``dtypes`` (GEMM ``a``, ``b``,
``c``; attention ``q``, ``k``, ``v``, ``o``; conv2d ``x``, ``w``, ``y``; the others
``x`` and ``y``; optional ``bias``, ``weight``, ``lse``); a tensor not named there takes
the first dtype listed (accumulator types excluded). An attention kernel's ``kv_cache``
names the type K and V are stored in (the bytes they move) apart from the type they are
computed in (``k``, ``v``): an FP8 KV cache dequantised to BF16 in registers.

A causal mask is counted exactly: the query-key pairs it keeps, the diagonal included
(:mod:`roofgen.operators.causal`). No model gives a negative count, nor one beyond
:data:`LARGEST_COUNT` (1e60, the largest quantity roofgen computes with): a shape that
would is an error (:func:`shape_error`), as is a shape key beyond :data:`MAX_KEY` (2^53).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal

from roofgen.operators.causal import attention_lengths, causal_alignment, causal_pairs

__all__ = [
    "DTYPE_BYTES",
    "KV_CACHE",
    "LARGEST_COUNT",
    "MAX_KEY",
    "MAX_TENSORS",
    "SHAPE_KEYS",
    "KeySpec",
    "ModelOutcome",
    "OpModel",
    "Tensor",
    "check_shape",
    "operator_model",
    "shape_error",
]

#: The largest shape key: 2^53, the largest integer a float holds exactly.
MAX_KEY = 2**53
#: The most input or output tensors of an element-wise kernel: the model lists each one
#: (100 million of them never finished).
MAX_TENSORS = 1000
#: The largest count a model may give: spec.quantity.LARGEST, the largest quantity.
LARGEST_COUNT = 1e60

#: Bytes per element of each dtype (tf32 is stored as fp32).
DTYPE_BYTES: dict[str, float] = {
    "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1, "fp8-e4m3": 1,
    "fp8-e5m2": 1, "fp6": 0.75, "fp4": 0.5, "int32": 4, "int8": 1, "int4": 0.5, "bool": 1,
}  # fmt: skip
#: The precision a roof is stated in, for data of each dtype.
_PRECISION = {"fp8-e4m3": "fp8", "fp8-e5m2": "fp8", "bool": "int8"}
#: dtypes keys that name an arithmetic type, or a storage type of other tensors.
_NOT_TENSORS = frozenset({"accumulator", "accumulate", "compute", "kv_cache"})
#: The dtypes key of the type an attention kernel stores K and V in (its KV cache).
KV_CACHE = "kv_cache"

#: FLOPs per score of a softmax (max, subtract, add, and two rescaling multiplies).
SOFTMAX_FLOP = 5
#: FLOPs per element: layernorm (mean add, subtract, square-accumulate FMA, normalise,
#: scale-and-shift FMA) and rmsnorm (square-accumulate FMA, normalise, scale).
LAYERNORM_FLOP = 7
RMSNORM_FLOP = 4


@dataclass(frozen=True)
class KeySpec:
    """One shape key: whether it is required, its meaning, and its type."""

    required: bool
    description: str
    kind: Literal["count", "text"] = "count"
    maximum: int = 2**53  # MAX_KEY; less where the model makes something per unit


def _req(text: str, maximum: int = 2**53) -> KeySpec:
    return KeySpec(True, text, maximum=maximum)


def _opt(text: str, kind: Literal["count", "text"] = "count") -> KeySpec:
    return KeySpec(False, text, kind)


_GEMM = {
    "m": _req("rows of A and C"),
    "n": _req("columns of B and C"),
    "k": _req("the reduction dimension"),
    "layout": _opt("operand layout, e.g. 'tn' (not used by the model)", "text"),
}
_ROWS = {"rows": _req("rows"), "cols": _req("elements per row")}

#: Valid shape keys of each operator kind with a model. Kinds not listed (copy,
#: collective, other) take any keys.
SHAPE_KEYS: dict[str, dict[str, KeySpec]] = {
    "gemm": _GEMM,
    "batched-gemm": {"batch": _req("independent GEMMs"), **_GEMM},
    "attention": {
        "batch": _req("sequences"),
        "heads": _req("query heads"),
        "kv_heads": _opt("key/value heads (GQA, MQA); default: heads"),
        "seq": _opt("prefill: query and key length; decode: the KV-cache length"),
        "seq_q": _opt("query length (decode: default 1)"),
        "seq_kv": _opt("key/value length (the KV cache in decode)"),
        "head_dim": _req("dimension of each head"),
    },
    "softmax": _ROWS,
    "layernorm": _ROWS,
    "rmsnorm": _ROWS,
    "elementwise": {
        "n": _req("elements of each tensor"),
        "inputs": _req("input tensors", MAX_TENSORS),
        "outputs": _req("output tensors", MAX_TENSORS),
        "flop_per_element": _opt("FLOPs per element (default: inputs - 1, at least 1)"),
    },
    "reduction": {"n": _req("elements reduced"), "out": _opt("output elements (default 1)")},
    "conv2d": {
        "n": _req("batch"),
        "c": _req("input channels"),
        "h": _req("input height"),
        "w": _req("input width"),
        "k": _req("output channels"),
        "r": _req("filter height"),
        "s": _req("filter width"),
        "stride": _opt("stride (default 1)"),
        "padding": _opt("zero padding on each side (default 0)"),
    },
}


@dataclass(frozen=True)
class Tensor:
    """One tensor of the compulsory traffic: read or written once."""

    name: str
    elements: float
    dtype: str | None
    access: Literal["read", "write"]

    @property
    def bytes(self) -> float | None:
        return None if self.dtype is None else self.elements * DTYPE_BYTES[self.dtype]


@dataclass(frozen=True)
class OpModel:
    """What an operator needs: FLOP, OP and bytes (SI base units: FLOP, OP, byte)."""

    kind: str
    matrix_flop: float
    vector_flop: float
    transcendental_op: float
    matrix_precision: str | None  # precision of the matrix work (None: no matrix work)
    vector_precision: str
    tensors: tuple[Tensor, ...]
    notes: tuple[str, ...] = ()

    @property
    def flop(self) -> float:
        return self.matrix_flop + self.vector_flop

    @property
    def bytes_min(self) -> float | None:
        """Compulsory traffic (bytes), or None when a tensor's dtype is unknown."""
        sizes = [t.bytes for t in self.tensors]
        if any(b is None for b in sizes):
            return None
        return float(sum(b for b in sizes if b is not None))

    @property
    def untyped(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tensors if t.dtype is None)


@dataclass(frozen=True)
class ModelOutcome:
    """A model, or why there is none (``reason``)."""

    model: OpModel | None
    reason: str = ""


# --------------------------------------------------------------------------- shapes


def check_shape(kind: str, shape: Mapping[str, object]) -> list[tuple[str, str]]:
    """``(key, message)`` for each shape key that a model of ``kind`` cannot use."""
    keys = SHAPE_KEYS.get(kind)
    if keys is None:
        return []
    problems = []
    valid = ", ".join(keys)
    for key, value in shape.items():
        spec = keys.get(key)
        if spec is None:
            problems.append(
                (key, f"unknown shape key {key!r} for operator kind {kind!r}; valid keys: {valid}")
            )
        elif spec.kind == "count" and (
            isinstance(value, bool) or not isinstance(value, int) or value < _minimum(key)
        ):
            least = "a non-negative" if _minimum(key) == 0 else "a positive"
            problems.append((key, f"{key} ({spec.description}) must be {least} integer"))
        elif spec.kind == "count" and isinstance(value, int) and value > spec.maximum:
            why = "no shape has that many" if spec.maximum == MAX_KEY else "the model lists each"
            problems.append(
                (key, f"{key} ({spec.description}) is more than {spec.maximum:,}: {why}")
            )
    if kind == "attention" and "seq" in shape and ("seq_q" in shape or "seq_kv" in shape):
        problems.append(("seq", "give seq, or seq_q and seq_kv, not both"))
    return problems


def _minimum(key: str) -> int:
    return 0 if key in ("padding", "flop_per_element") else 1


def _missing(kind: str, shape: Mapping[str, object], phase: str | None) -> list[str]:
    missing = [k for k, spec in SHAPE_KEYS[kind].items() if spec.required and k not in shape]
    if kind == "attention" and attention_lengths(shape, phase) is None:
        missing.append("seq (or seq_q and seq_kv)")
    return missing


# --------------------------------------------------------------------------- dtypes


class _Types:
    """Each tensor's dtype by name, else the first dtype listed."""

    def __init__(self, dtypes: Mapping[str, str]) -> None:
        self.dtypes = dict(dtypes)
        listed = [v for k, v in dtypes.items() if k not in _NOT_TENSORS]
        self.default = listed[0] if listed else None

    def __call__(self, name: str) -> str | None:
        return self.dtypes.get(name, self.default)

    def has(self, name: str) -> bool:
        return name in self.dtypes


def _precision(dtype: str | None) -> str | None:
    return None if dtype is None else _PRECISION.get(dtype, dtype)


def _vector_precision(dtype: str | None) -> str:
    return "fp64" if dtype == "fp64" else "fp32"


# --------------------------------------------------------------------------- models


def operator_model(
    kind: str,
    shape: Mapping[str, object],
    dtypes: Mapping[str, str],
    *,
    phase: str | None = None,
    causal: bool | str | None = None,
) -> ModelOutcome:
    """The model of one operator, or the reason there is none."""
    builder = _BUILDERS.get(kind)
    if builder is None:
        return ModelOutcome(None, f"no operator model for kind {kind!r}")
    if check_shape(kind, shape):
        return ModelOutcome(None, "the shape has keys the model cannot use")
    missing = _missing(kind, shape, phase)
    if missing:
        return ModelOutcome(None, f"the shape lacks {', '.join(missing)}")
    dims = {k: v for k, v in shape.items() if isinstance(v, int) and not isinstance(v, bool)}
    try:
        built = builder(dims, _Types(dtypes), phase, causal_alignment(causal, phase))
        _countable(built)
    except ValueError as exc:
        return ModelOutcome(None, f"the {kind} shape {_shape_text(shape)}: {exc}")
    return ModelOutcome(built)


def shape_error(
    kind: str,
    shape: Mapping[str, object],
    dtypes: Mapping[str, str],
    *,
    phase: str | None = None,
    causal: bool | str | None = None,
) -> str | None:
    """Why a complete shape (every key valid, none missing) has no model: it cannot be
    (a filter larger than its input, a count that would be negative); else None."""
    if kind not in _BUILDERS or check_shape(kind, shape) or _missing(kind, shape, phase):
        return None
    outcome = operator_model(kind, shape, dtypes, phase=phase, causal=causal)
    return outcome.reason or None


def _shape_text(shape: Mapping[str, object]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in shape.items()) + "}"


def _countable(model: OpModel) -> None:
    counts = {
        "matrix FLOPs": model.matrix_flop,
        "vector FLOPs": model.vector_flop,
        "transcendental OPs": model.transcendental_op,
        **{f"elements of {t.name}": t.elements for t in model.tensors},
    }
    negative = [f"{name} {value:g}" for name, value in counts.items() if value < 0]
    if negative:
        raise ValueError(f"gives negative counts ({', '.join(negative)}); check its keys")
    huge = [f"{name} {value:.3g}" for name, value in counts.items() if value > LARGEST_COUNT]
    if huge:
        raise ValueError(
            f"gives counts beyond 1e60, the largest roofgen computes with ({', '.join(huge)}); "
            "check its keys"
        )


_Dims = dict[str, int]
_Builder = Callable[[_Dims, "_Types", str | None, str | None], "OpModel"]


def _gemm(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
    batch = d.get("batch", 1)
    m, n, k = d["m"], d["n"], d["k"]
    tensors = [
        Tensor("a", batch * m * k, t("a"), "read"),
        Tensor("b", batch * k * n, t("b"), "read"),
        Tensor("c", batch * m * n, t("c"), "write"),
    ]
    if t.has("bias"):
        tensors.append(Tensor("bias", batch * n, t("bias"), "read"))
    return OpModel(
        kind="gemm",
        matrix_flop=2.0 * batch * m * n * k,
        vector_flop=0.0,
        transcendental_op=0.0,
        matrix_precision=_precision(t("a")),
        vector_precision=_vector_precision(t("a")),
        tensors=tuple(tensors),
    )


def _attention(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
    b, h, hd = d["batch"], d["heads"], d["head_dim"]
    kv = d.get("kv_heads", h)
    if h % kv:
        raise ValueError(
            f"heads ({h}) is not a multiple of kv_heads ({kv}); kv_heads divides heads"
        )
    lengths = attention_lengths(d, phase)
    assert lengths is not None  # checked by _missing
    seq_q, seq_kv = lengths
    pairs = float(causal_pairs(seq_q, seq_kv, causal))
    notes = []
    if causal is not None:
        notes.append(f"causal mask ({causal}): masked scores are not counted")
        if causal == "bottom-right" and seq_q > seq_kv:
            notes.append(f"the first {seq_q - seq_kv} queries see no key")
    scores = b * h * pairs
    # K and V move at the KV cache's storage type where it is given.
    k_type = t(KV_CACHE) if t.has(KV_CACHE) else t("k")
    v_type = t(KV_CACHE) if t.has(KV_CACHE) else t("v")
    tensors = [
        Tensor("q", b * h * seq_q * hd, t("q"), "read"),
        Tensor("k", b * kv * seq_kv * hd, k_type, "read"),
        Tensor("v", b * kv * seq_kv * hd, v_type, "read"),
        Tensor("o", b * h * seq_q * hd, t("o"), "write"),
    ]
    if t.has("lse"):
        tensors.append(Tensor("lse", b * h * seq_q, t("lse"), "write"))
    return OpModel(
        kind="attention",
        matrix_flop=4.0 * scores * hd,  # Q.K^T and P.V: 2 x head_dim FLOP per score each
        vector_flop=SOFTMAX_FLOP * scores,
        transcendental_op=scores,
        matrix_precision=_precision(t("q")),
        vector_precision=_vector_precision(t("q")),
        tensors=tuple(tensors),
        notes=tuple(notes),
    )


def _rows(per_element: int, per_row_rsqrt: bool, affine: tuple[str, ...]) -> _Builder:
    def build(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
        rows, cols = d["rows"], d["cols"]
        elements = float(rows * cols)
        share = (
            0.5 if causal is not None and not per_row_rsqrt else 1.0
        )  # softmax under a causal mask
        tensors = [Tensor("x", elements, t("x"), "read"), Tensor("y", elements, t("y"), "write")]
        tensors += [Tensor(name, cols, t(name), "read") for name in affine if t.has(name)]
        notes = ("causal mask: masked entries are not counted",) if share < 1 else ()
        return OpModel(
            kind="",
            matrix_flop=0.0,
            vector_flop=per_element * elements * share,
            transcendental_op=rows if per_row_rsqrt else elements * share,
            matrix_precision=None,
            vector_precision=_vector_precision(t("x")),
            tensors=tuple(tensors),
            notes=notes,
        )

    return build


def _elementwise(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
    n, inputs, outputs = d["n"], d["inputs"], d["outputs"]
    per = d.get("flop_per_element", max(inputs - 1, 1))
    tensors = [Tensor(f"x{i}" if inputs > 1 else "x", n, t("x"), "read") for i in range(inputs)]
    tensors += [Tensor(f"y{i}" if outputs > 1 else "y", n, t("y"), "write") for i in range(outputs)]
    return OpModel(
        kind="elementwise",
        matrix_flop=0.0,
        vector_flop=float(per * n),
        transcendental_op=0.0,
        matrix_precision=None,
        vector_precision=_vector_precision(t("x")),
        tensors=tuple(tensors),
    )


def _reduction(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
    n, out = d["n"], d.get("out", 1)
    if out > n:
        raise ValueError(f"out ({out}) is larger than n ({n}); out is at most n")
    return OpModel(
        kind="reduction",
        matrix_flop=0.0,
        vector_flop=float(n - out),  # n / out - 1 additions per output
        transcendental_op=0.0,
        matrix_precision=None,
        vector_precision=_vector_precision(t("x")),
        tensors=(Tensor("x", n, t("x"), "read"), Tensor("y", out, t("y"), "write")),
    )


def _conv2d(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
    stride, pad = d.get("stride", 1), d.get("padding", 0)
    h_out = (d["h"] + 2 * pad - d["r"]) // stride + 1
    w_out = (d["w"] + 2 * pad - d["s"]) // stride + 1
    if h_out < 1 or w_out < 1:
        raise ValueError(
            "the filter is larger than the padded input; r and s are at most h and w "
            "plus twice the padding"
        )
    outputs = d["n"] * d["k"] * h_out * w_out
    return OpModel(
        kind="conv2d",
        matrix_flop=2.0 * outputs * d["c"] * d["r"] * d["s"],
        vector_flop=0.0,
        transcendental_op=0.0,
        matrix_precision=_precision(t("x")),
        vector_precision=_vector_precision(t("x")),
        tensors=(
            Tensor("x", d["n"] * d["c"] * d["h"] * d["w"], t("x"), "read"),
            Tensor("w", d["k"] * d["c"] * d["r"] * d["s"], t("w"), "read"),
            Tensor("y", outputs, t("y"), "write"),
        ),
        notes=(f"output {h_out} x {w_out}",),
    )


def _named(kind: str, build: _Builder) -> _Builder:
    def named(d: _Dims, t: _Types, phase: str | None, causal: str | None) -> OpModel:
        return replace(build(d, t, phase, causal), kind=kind)

    return named


_BUILDERS: dict[str, _Builder] = {
    "gemm": _named("gemm", _gemm),
    "batched-gemm": _named("batched-gemm", _gemm),
    "attention": _attention,
    "softmax": _named("softmax", _rows(SOFTMAX_FLOP, False, ())),
    "layernorm": _named("layernorm", _rows(LAYERNORM_FLOP, True, ("weight", "bias"))),
    "rmsnorm": _named("rmsnorm", _rows(RMSNORM_FLOP, True, ("weight",))),
    "elementwise": _elementwise,
    "reduction": _reduction,
    "conv2d": _conv2d,
}
