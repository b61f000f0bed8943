"""Vega-Lite spec pieces as plain dicts: the building blocks of every chart.

The charts write their specs directly, without Altair's objects: building them through
Altair cost deep copies, parameter lifting and schema lookups on every chart. The
pieces keep the key order Altair wrote (a mark's ``type`` first, a title's ``text``
first, everything else sorted), so the specs, and the pages that embed them, stay the
same bytes. Nothing is validated here: the tests validate every chart of the example
site against Vega-Lite's schema.

Every call returns new dicts, so that a caller may change one spec without changing
another.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from roofgen.charts.labels import text_width

__all__ = [
    "SCHEMA_URL",
    "VEGA_LITE_VERSION",
    "Spec",
    "channel",
    "expr",
    "layer_chart",
    "mark",
    "title",
    "top_level",
    "unit",
    "vconcat_chart",
]

#: The Vega-Lite version the specs are written for (the ``$schema`` they declare); the
#: one Altair's pinned version targets, so that notebooks and vl-convert agree with it.
VEGA_LITE_VERSION = "v6.4.1"
SCHEMA_URL = f"https://vega.github.io/schema/vega-lite/{VEGA_LITE_VERSION}.json"

#: A Vega-Lite spec, or a piece of one.
Spec = dict[str, Any]


def _sorted(props: dict[str, Any]) -> Spec:
    return {key: props[key] for key in sorted(props)}


def expr(text: str) -> Spec:
    """A Vega expression as a mark property's value: ``{"expr": text}``."""
    return {"expr": text}


def mark(kind: str, **props: Any) -> Spec:
    """A mark definition: ``{"type": kind, ...props}``."""
    return {"type": kind, **_sorted(props)}


def channel(field: str, kind: str | None = None, **props: Any) -> Spec:
    """A field channel definition (``kind``: its type, ``"quantitative"``...); pass
    ``None`` for a property to write ``null`` (``legend=None``: no legend)."""
    if kind is not None:
        props["type"] = kind
    props["field"] = field
    return _sorted(props)


def unit(data: str, mark: Spec, encoding: dict[str, Any], name: str | None = None) -> Spec:
    """One layer: ``mark`` over the named dataset ``data`` with ``encoding`` (none when
    empty), named ``name`` (for the selections that act on it)."""
    spec: Spec = {"data": {"name": data}, "mark": mark}
    if encoding:
        spec["encoding"] = _sorted(encoding)
    if name is not None:
        spec["name"] = name
    return spec


def title(text: str, subtitle: str | Sequence[str] = "", **props: Any) -> Spec:
    """A title anchored at the start; no subtitle when ``subtitle`` is empty."""
    if subtitle:
        props["subtitle"] = list(subtitle) if not isinstance(subtitle, str) else subtitle
    return {"text": text, **_sorted({"anchor": "start", **props})}


def _wrapped(text: str, width: float, size: float, bold: bool) -> str | list[str]:
    """``text`` in lines no wider than ``width`` pixels (one string when it fits)."""
    factor = 1.1 if bold else 1.0
    if text_width(text, size) * factor <= width:
        return text
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width(f"{lines[-1]} {word}", size) * factor <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def fit_title(spec_title: Spec, width: float) -> Spec:
    """A title (and subtitle) wrapped to ``width`` pixels, so that no line runs past the
    chart (where the embed's menu button sits)."""
    out = dict(spec_title)
    if isinstance(out.get("text"), str):
        out["text"] = _wrapped(out["text"], width, out.get("fontSize", 13), True)
    if isinstance(out.get("subtitle"), str):
        out["subtitle"] = _wrapped(out["subtitle"], width, 12, False)
    return out


def layer_chart(
    layers: list[Spec],
    *,
    width: int,
    height: int,
    title: Spec,
    encoding: dict[str, Any] | None = None,
    params: list[Spec] | None = None,
) -> Spec:
    """Layers drawn over each other, sharing ``encoding`` (x and y). The data of a single
    layer is the chart's (as Altair wrote it)."""
    spec: Spec = {"layer": layers}
    if len(layers) == 1 and "data" in layers[0]:
        spec["data"] = layers[0].pop("data")
    if encoding:
        spec["encoding"] = _sorted(encoding)
    spec["height"] = height
    if params:
        spec["params"] = params
    spec["title"] = fit_title(title, width)
    spec["width"] = width
    return spec


def vconcat_chart(panels: list[Spec], *, resolve: dict[str, str], title: Spec) -> Spec:
    """Panels one above the other, the scales of ``resolve`` independent of each other; the
    title wrapped to the widest panel."""
    width = max((p.get("width", 0) for p in panels), default=0)
    if width:
        title = fit_title(title, width)
    return {"vconcat": panels, "resolve": {"scale": _sorted(resolve)}, "title": title}


def top_level(body: Spec, config: Spec) -> Spec:
    """``body`` (a layer or concatenated chart) as a whole spec: its ``config`` first
    (after the default view size Altair's theme wrote), then ``$schema``."""
    view = {"continuousWidth": 300, "continuousHeight": 300, **config.get("view", {})}
    rest = _sorted({key: value for key, value in config.items() if key != "view"})
    return {"config": {"view": view, **rest}, **body, "$schema": SCHEMA_URL}
