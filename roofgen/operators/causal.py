"""Attention's lengths and the query-key pairs a causal mask keeps. Pure.

A causal mask keeps the pairs on and below a diagonal. Where that diagonal starts
matters once the query and key lengths differ: "top-left" (query i sees keys 0..i,
PyTorch SDPA's ``is_causal``) or "bottom-right" (the queries are the last seq_q
positions: query i sees keys 0..seq_kv - seq_q + i, FlashAttention 2.1 and later).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["CAUSAL_ALIGNMENTS", "attention_lengths", "causal_alignment", "causal_pairs"]

CAUSAL_ALIGNMENTS = ("top-left", "bottom-right")


def causal_alignment(causal: bool | str | None, phase: str | None = None) -> str | None:
    """The causal mask's alignment, or None when there is no mask.

    ``true`` takes the default: top-left (PyTorch SDPA's ``is_causal``), but bottom-right
    in decode, whose queries are the newest tokens of the KV cache (top-left would let a
    decoded token see only the first key).
    """
    if causal is None or causal is False:
        return None
    if causal is True:
        return "bottom-right" if phase == "decode" else "top-left"
    if causal not in CAUSAL_ALIGNMENTS:
        raise ValueError(f"causal must be true, false, {' or '.join(CAUSAL_ALIGNMENTS)}")
    return causal


def causal_pairs(seq_q: int, seq_kv: int, alignment: str | None) -> int:
    """Query-key pairs a causal mask keeps, the diagonal included (all pairs if None).

    Top-left: query i (from 0) sees keys 0..i, clamped to the seq_kv keys:
    sum over i of min(i + 1, seq_kv). Bottom-right: query i sees keys
    0..seq_kv - seq_q + i: sum over i of max(0, seq_kv - seq_q + i + 1); the first
    seq_q - seq_kv queries see no key when seq_q > seq_kv.
    """
    if alignment is None:
        return seq_q * seq_kv
    if alignment == "top-left":
        ramp = min(seq_q, seq_kv)  # queries 0..ramp-1 see 1..ramp keys, the rest all
        return ramp * (ramp + 1) // 2 + (seq_q - ramp) * seq_kv
    offset = seq_kv - seq_q
    if offset >= 0:  # query i sees offset + 1 + i keys
        return seq_q * (offset + 1) + seq_q * (seq_q - 1) // 2
    return seq_kv * (seq_kv + 1) // 2  # the last seq_kv queries see 1..seq_kv keys


def attention_lengths(shape: Mapping[str, object], phase: str | None) -> tuple[int, int] | None:
    """(query length, key length) of an attention shape; None when it lacks them.

    ``seq`` is both lengths in prefill, the KV-cache length (one query) in decode;
    ``seq_q`` defaults to 1 in decode.
    """
    d = {k: v for k, v in shape.items() if isinstance(v, int) and not isinstance(v, bool)}
    if "seq" in d:
        return (1 if phase == "decode" else d["seq"]), d["seq"]
    if "seq_kv" in d and ("seq_q" in d or phase == "decode"):
        return d.get("seq_q", 1), d["seq_kv"]
    return None
