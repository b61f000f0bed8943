"""Render Vega-Lite specs offline with vl-convert: byte-stable SVG, PNG, self-contained HTML.

Nothing is ever fetched: SVG and PNG rendering pass ``allowed_base_urls=[]`` and the
charts carry their data inline; HTML bundles the Vega libraries (``bundle=True``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Any

import vl_convert as vlc

from roofgen.charts.vl import VEGA_LITE_VERSION

_ID_RE = re.compile(r'\bid="([^"]+)"')
_REF_RE = re.compile(r"""(url\(\s*['"]?#|href=["']#)([^)'"\s]+)""")


def vega_lite_version() -> str:
    """The Vega-Lite version the chart specs are written for, for example ``"v6.4.1"``."""
    return VEGA_LITE_VERSION


@functools.cache
def vl_convert_version() -> str:
    """The vl-convert Vega-Lite version matching the specs' (``"6.4"`` for ``v6.4.1``).

    Same major and minor version when vl-convert ships it; otherwise the newest one of the
    same major version not newer than the specs'. Raises ``RuntimeError`` when vl-convert
    has no Vega-Lite of the specs' major version.
    """
    major, minor = _major_minor(vega_lite_version())
    candidates = sorted(
        (_major_minor(v), v)
        for v in vlc.get_vegalite_versions()
        if _major_minor(v)[0] == major and _major_minor(v)[1] <= minor
    )
    if not candidates:
        raise RuntimeError(
            f"vl-convert {getattr(vlc, '__version__', '?')} has no Vega-Lite {major}.x "
            f"(the charts are written for {vega_lite_version()}); "
            f"versions: {vlc.get_vegalite_versions()}"
        )
    return candidates[-1][1]


def _major_minor(version: str) -> tuple[int, int]:
    parts = version.lstrip("v").split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0


def spec_digest(spec: dict[str, Any]) -> str:
    """Short hash of the spec's canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(spec, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


def stabilise_svg_ids(svg: str, prefix: str) -> str:
    """Renumber every ``id`` in document order as ``{prefix}-{n}``, and its references.

    vl-convert numbers clip paths and gradients per process (``clip1``, then ``clip3``...
    in later renders), so the same chart renders differently. References are
    ``url(#id)`` (quoted or not) and ``href="#id"`` / ``xlink:href="#id"``.
    """
    mapping: dict[str, str] = {}
    for match in _ID_RE.finditer(svg):
        old = match.group(1)
        if old not in mapping:
            mapping[old] = f"{prefix}-{len(mapping) + 1}"
    if not mapping:
        return svg

    def _id(match: re.Match[str]) -> str:
        return f'id="{mapping[match.group(1)]}"'

    def _ref(match: re.Match[str]) -> str:
        target = match.group(2)
        return match.group(1) + mapping.get(target, target)

    return _REF_RE.sub(_ref, _ID_RE.sub(_id, svg))


def to_svg(spec: dict[str, Any]) -> str:
    """Static SVG of a Vega-Lite spec, byte-stable for a given spec in any process."""
    svg = vlc.vegalite_to_svg(spec, vl_version=vl_convert_version(), allowed_base_urls=[])
    return stable_svg(spec, svg)


def stable_svg(spec: dict[str, Any], svg: str) -> str:
    """vl-convert's SVG of ``spec`` (from any process) made byte-stable."""
    return stabilise_svg_ids(svg, f"rg{spec_digest(spec)}")


def to_png(spec: dict[str, Any], scale: float = 2.0) -> bytes:
    """PNG of a Vega-Lite spec at ``scale`` times its pixel size."""
    png = vlc.vegalite_to_png(
        spec, vl_version=vl_convert_version(), scale=scale, allowed_base_urls=[]
    )
    return bytes(png)


def to_html(spec: dict[str, Any]) -> str:
    """Self-contained interactive HTML page (Vega, Vega-Lite and vega-embed inlined)."""
    return str(vlc.vegalite_to_html(spec, vl_version=vl_convert_version(), bundle=True))
