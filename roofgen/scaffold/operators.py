"""The operator kinds ``roofgen new case`` writes a template of, and which one an id names."""

from __future__ import annotations

import re
from collections.abc import Sequence

from roofgen.units import work_unit

__all__ = ["ALIASES", "OPERATORS", "TODO", "guess_operator", "model_work"]

#: What a value only a measurement can give is written as (the schema refuses it).
TODO = "TODO"

#: The template's shape and dtypes per operator kind: a typical size of each.
OPERATORS: dict[str, tuple[dict[str, int], dict[str, str]]] = {
    "gemm": ({"m": 8192, "n": 8192, "k": 8192},
             {"a": "bf16", "b": "bf16", "c": "bf16", "accumulate": "fp32"}),
    "batched-gemm": ({"batch": 16, "m": 2048, "n": 2048, "k": 2048},
                     {"a": "bf16", "b": "bf16", "c": "bf16", "accumulate": "fp32"}),
    "attention": ({"batch": 4, "heads": 32, "seq": 4096, "head_dim": 128},
                  {"q": "bf16", "k": "bf16", "v": "bf16", "o": "bf16"}),
    "softmax": ({"rows": 8192, "cols": 8192}, {"x": "bf16", "y": "bf16"}),
    "layernorm": ({"rows": 8192, "cols": 8192},
                  {"x": "bf16", "y": "bf16", "weight": "bf16", "bias": "bf16"}),
    "rmsnorm": ({"rows": 8192, "cols": 8192}, {"x": "bf16", "y": "bf16", "weight": "bf16"}),
    "elementwise": ({"n": 268435456, "inputs": 2, "outputs": 1}, {"x": "bf16", "y": "bf16"}),
    "reduction": ({"n": 268435456, "out": 1}, {"x": "fp32", "y": "fp32"}),
    "conv2d": ({"n": 32, "c": 256, "h": 56, "w": 56, "k": 256, "r": 3, "s": 3, "padding": 1},
               {"x": "bf16", "w": "bf16", "y": "bf16"}),
}  # fmt: skip
#: Words in ids that name an operator kind other than by its own name.
ALIASES = {"matmul": "gemm", "mm": "gemm", "bmm": "batched-gemm", "attn": "attention",
           "sdpa": "attention", "ln": "layernorm", "conv": "conv2d", "reduce": "reduction",
           "sum": "reduction"}  # fmt: skip


def guess_operator(*ids: str) -> str | None:
    """The operator kind the first id that names exactly one kind names, e.g.
    'softmax-fused' -> softmax, 'flash-attn' -> attention; None when none does."""
    for ident in ids:
        words = re.split(r"[-_.]", ident)
        found = {ALIASES[w] for w in words if w in ALIASES}
        found |= {k for k in OPERATORS if k in ident}
        # 'batched-gemm' names gemm too: keep the longest of nested names.
        found = {k for k in found if not any(k != o and k in o for o in found)}
        if len(found) == 1:
            return found.pop()
    return None


def model_work(
    kind: str,
    shape: dict[str, int],
    dtypes: dict[str, str],
    units: Sequence[tuple[str, str, Sequence[str]]],
) -> dict[str, dict[str, str]]:
    """The operator model's FLOPs (and OPs) by the unit and precision they run on, from
    the machine's ``units`` as (id, kind, precisions): matrix work on a tensor unit,
    vector work and transcendentals on a unit of another kind where there is one."""
    from roofgen.operators.models import operator_model

    model = operator_model(kind, shape, dtypes).model
    if model is None:
        return {}
    parts = [
        (model.matrix_flop, model.matrix_precision, True),
        (model.vector_flop, model.vector_precision, False),
        (model.transcendental_op, "transcendental", False),
    ]
    out: dict[str, dict[str, str]] = {}
    for amount, precision, matrix in parts:
        if amount <= 0 or precision is None:
            continue
        fits = [(u, k) for u, k, precisions in units if precision in precisions]
        preferred = [u for u, k in fits if (k == "tensor") == matrix]
        chosen = preferred or [u for u, _ in fits]
        if chosen:
            out.setdefault(chosen[0], {})[precision] = f"{_sci(amount)} {work_unit(precision)}"
    return out


def _sci(x: float) -> str:
    mantissa, exponent = f"{x:.3g}".partition("e")[::2]
    if not exponent:
        return mantissa
    return f"{mantissa}e{int(exponent)}"
