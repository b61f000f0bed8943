"""Offline JavaScript assets for generated sites.

The site must work without network access and when opened straight from the
file system (``file://``).  That rules out CDN scripts and ES module scripts
(browsers refuse module scripts from ``file://``), so this module writes plain
classic scripts into the site:

``assets/javascripts/roofgen-vega.js``
    Vega, Vega-Lite and vega-embed, bundled at build time by vl-convert and
    wrapped in a function so that nothing but ``window.vegaEmbed`` leaks into
    the page (``window.vega``/``window.vegaLite`` too, should vl-convert ever
    provide them; 1.9 does not, see ``_BUNDLE_SNIPPET``).  The Vega-Lite
    version is the one roofgen's charts are written for
    (:data:`roofgen.charts.vl.VEGA_LITE_VERSION`).  Bundling takes seconds, so
    the result is cached in the user's cache folder (never a project's), keyed
    by the vl-convert and Vega-Lite versions.  vega-embed brings Vega's expression
    interpreter (``vega-interpreter``, which vl-convert vendors as vega-embed's
    dependency), and the boot script renders with ``ast: true``: Vega then evaluates
    expressions without ``Function``, so the site's Content-Security-Policy
    (:mod:`roofgen.site.csp`) needs no ``'unsafe-eval'``.

``assets/javascripts/roofgen-charts.js``
    Boot script: renders every ``<div class="roofgen-chart" data-spec-id="...">``
    from the JSON spec in ``<template id="...">`` (or in a
    ``<script type="application/json" id="...">``) and
    reports progress in ``document.documentElement.dataset.roofgenCharts``
    (``"pending"``, then ``"ready"`` or ``"error"``; on error the message is in
    ``dataset.roofgenChartsError``).  Re-runs on Material's instant navigation.

``assets/javascripts/roofgen-iframe-worker.js``
    Stand-in for ``Worker`` on ``file://`` pages, where browsers refuse to start
    web workers.  Material for MkDocs runs its search in a worker; with this
    script listed in ``extra.polyfills`` (and Material's ``offline`` plugin
    enabled) search works from ``file://`` without loading anything from the
    network.

The last two are roofgen's own files, kept under the same names in
``templates/assets/`` (found through :func:`roofgen.datafiles.data_dir`, so in a
wheel too) and copied as they are.

:func:`chart_html_block` returns the raw HTML a Markdown page embeds for one
chart.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

from roofgen.charts.vl import VEGA_LITE_VERSION
from roofgen.datafiles import data_dir
from roofgen.files import write_atomic, write_cache_entry

__all__ = [
    "CHARTS_BOOT_PATH",
    "IFRAME_WORKER_PATH",
    "JAVASCRIPTS_DIR",
    "VEGA_BUNDLE_PATH",
    "AssetError",
    "chart_html_block",
    "default_cache_dir",
    "vega_bundle_js",
    "vega_lite_version",
    "vega_versions",
    "write_iframe_worker",
    "write_vega_bundle",
]

#: Folder of the scripts, relative to the site root (POSIX separators).
JAVASCRIPTS_DIR = "assets/javascripts"
VEGA_BUNDLE_PATH = f"{JAVASCRIPTS_DIR}/roofgen-vega.js"
CHARTS_BOOT_PATH = f"{JAVASCRIPTS_DIR}/roofgen-charts.js"
IFRAME_WORKER_PATH = f"{JAVASCRIPTS_DIR}/roofgen-iframe-worker.js"

# Bump when the wrapper or snippet below changes, so old cache entries are ignored.
_BUNDLE_FORMAT = 1

# vl-convert bundles this as an ES module entry point, after its own imports of
# vegaEmbed, vega and vegaLite.  vl-convert 1.9 imports vega and vega-lite as
# *default* imports, which those ES modules do not have, so both are null in the
# bundle; they are published only if a later vl-convert provides them.
_BUNDLE_SNIPPET = (
    "window.vegaEmbed = vegaEmbed;\n"
    "if (vega) window.vega = vega;\n"
    "if (vegaLite) window.vegaLite = vegaLite;\n"
)

# The bundle has no import/export statements, so it can run as the body of a
# function in a classic script.  The function keeps its top-level names private
# (top-level ``const`` of classic scripts would share one global scope with every
# other script on the page).  ES modules are strict, hence "use strict".
_BUNDLE_PROLOGUE = "(function () {\n'use strict';\n"
_BUNDLE_EPILOGUE = "\n})();\n"

_SPEC_ID_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class AssetError(RuntimeError):
    """The chart scripts cannot be produced with the installed packages."""


# --------------------------------------------------------------------------- versions


def vega_lite_version() -> str:
    """Vega-Lite ``major.minor`` that the chart specs are written for, as vl-convert
    names it (read from :mod:`roofgen.charts.vl`, not Altair: a build imports no Altair).

    Raises :class:`AssetError` when the installed vl-convert cannot bundle it.
    """
    import vl_convert

    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", VEGA_LITE_VERSION)
    if match is None:
        raise AssetError(f"cannot read the charts' Vega-Lite version {VEGA_LITE_VERSION!r}")
    wanted = f"{match.group(1)}.{match.group(2)}"
    available = [v.lstrip("v") for v in vl_convert.get_vegalite_versions()]
    if wanted not in available:
        raise AssetError(
            f"roofgen's charts are Vega-Lite {VEGA_LITE_VERSION} specs, but "
            f"vl-convert-python {_vl_convert_version()} only bundles Vega-Lite "
            f"{', '.join(available)}; install matching versions (see constraints.txt)"
        )
    return wanted


def vega_versions() -> dict[str, str]:
    """Versions of the chart stack written by :func:`write_vega_bundle`."""
    import vl_convert

    return {
        "vega": vl_convert.get_vega_version(),
        "vega-lite": vega_lite_version(),
        "vega-lite-schema": VEGA_LITE_VERSION,
        "vega-embed": vl_convert.get_vega_embed_version(),
        "vl-convert": _vl_convert_version(),
    }


def _vl_convert_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("vl-convert-python")
    except metadata.PackageNotFoundError:  # pragma: no cover - unusual installs
        import vl_convert

        return str(getattr(vl_convert, "__version__", "unknown"))


# --------------------------------------------------------------------------- bundle


def default_cache_dir() -> Path:
    """The Vega bundles' folder in the user's cache folder (``$XDG_CACHE_HOME/roofgen/vega``
    on Linux): never a project's, so never one a repository can reach."""
    from roofgen.site.cachedir import vega_folder

    return vega_folder()


def _cache_file(cache_dir: Path, vl_convert_version: str, vl_version: str) -> Path:
    digest = hashlib.sha256(
        f"{_BUNDLE_FORMAT}\0{_BUNDLE_SNIPPET}\0{_BUNDLE_PROLOGUE}\0{_BUNDLE_EPILOGUE}".encode()
    ).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9.]+", "_", vl_convert_version)
    return cache_dir / f"vega-bundle-vlconvert{safe}-vl{vl_version}-{digest}.js"


def _looks_complete(text: str) -> bool:
    return text.startswith("/*") and "window.vegaEmbed" in text and text.endswith(_BUNDLE_EPILOGUE)


def _build_bundle(vl_version: str) -> str:
    import vl_convert

    body = vl_convert.javascript_bundle(_BUNDLE_SNIPPET, vl_version=vl_version)
    versions = vega_versions()
    header = (
        "/* roofgen chart runtime (classic script; defines window.vegaEmbed).\n"
        f" * vega {versions['vega']}, vega-lite {vl_version} (schema "
        f"{versions['vega-lite-schema']}), vega-embed {versions['vega-embed']}; "
        f"bundled by vl-convert {versions['vl-convert']}.\n"
        " * Vega, Vega-Lite and vega-embed: BSD-3-Clause, https://vega.github.io/ */\n"
    )
    return header + _BUNDLE_PROLOGUE + body + _BUNDLE_EPILOGUE


def vega_bundle_js(cache_dir: Path | None = None, *, use_cache: bool = True) -> str:
    """Text of the classic-script Vega bundle, from the cache when possible.

    ``cache_dir`` defaults to :func:`default_cache_dir`; a folder any file of which git
    tracks is neither read nor written, and ``use_cache=False`` bundles afresh. A cache
    that cannot be read or written only costs time: the bundle is then rebuilt.
    """
    from roofgen.site.cachedir import secure_folder, tracked

    vl_version = vega_lite_version()
    try:
        folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    except (OSError, RuntimeError):  # no home folder to find the user's cache folder in
        use_cache = False
    if not use_cache or (cache_dir is not None and tracked(folder)) or secure_folder(folder):
        return _build_bundle(vl_version)
    cache = _cache_file(folder, _vl_convert_version(), vl_version)
    try:
        cached = cache.read_text(encoding="utf-8")
    except (OSError, ValueError):  # unreadable or not text: rebuilt below
        cached = ""
    if _looks_complete(cached):
        return cached
    text = _build_bundle(vl_version)
    write_cache_entry(cache, text)  # owner-only; skipped where it cannot be written
    return text


def _own_script(site_path: str) -> str:
    """The text of one of roofgen's own scripts: ``templates/assets/`` holds it under the
    name it has in the site."""
    return (data_dir("templates") / "assets" / Path(site_path).name).read_text("utf-8")


def write_vega_bundle(
    dest_dir: Path, cache_dir: Path | None = None, *, use_cache: bool = True
) -> list[str]:
    """Write the Vega bundle and the chart boot script under ``dest_dir``.

    ``dest_dir`` is the site (or MkDocs ``docs_dir``) root.  Returns the paths
    written, relative to ``dest_dir`` with ``/`` separators, in the order the
    pages must load them (e.g. for MkDocs ``extra_javascript``).
    """
    dest = Path(dest_dir)
    write_atomic(dest / VEGA_BUNDLE_PATH, vega_bundle_js(cache_dir, use_cache=use_cache))
    write_atomic(dest / CHARTS_BOOT_PATH, _own_script(CHARTS_BOOT_PATH))
    return [VEGA_BUNDLE_PATH, CHARTS_BOOT_PATH]


def write_iframe_worker(dest_dir: Path) -> str:
    """Write the ``file://`` worker stand-in under ``dest_dir``; return its relative path.

    List the path in MkDocs ``extra.polyfills``: Material's ``offline`` plugin
    then does not add its own copy from unpkg.com, and search works offline.
    """
    write_atomic(Path(dest_dir) / IFRAME_WORKER_PATH, _own_script(IFRAME_WORKER_PATH))
    return IFRAME_WORKER_PATH


# --------------------------------------------------------------------------- pages


def _script_json(value: Any) -> str:
    """JSON that is inert inside an HTML ``<script>`` element (and in attributes)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    # These characters only occur inside JSON strings, where \\uXXXX escapes are valid.
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _alt_text(spec: dict[str, Any], spec_id: str) -> str:
    for key in ("description", "title"):
        value = spec.get(key)
        if isinstance(value, dict):
            value = value.get("text")
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return f"Chart {spec_id}"


def chart_html_block(
    spec_id: str,
    spec: dict[str, Any],
    svg_fallback_path: str | None,
    *,
    noscript: str | None = None,
) -> str:
    """Raw HTML block that embeds one interactive chart in a Markdown page.

    ``spec_id`` must be unique on the page and must not clash with other element
    ids (headings get ids from their text, so prefer something like
    ``"chart-roofline"``).  ``spec`` is a Vega-Lite spec (e.g. ``chart.to_dict()``).
    ``svg_fallback_path`` is a URL, relative to the page, of a static rendering
    shown when scripts do not run; ``None`` for no fallback, where ``noscript`` (plain
    text) may say instead why there is no chart.

    Layout::

        <div class="roofgen-chart-block" id="ID-block">
        <div class="roofgen-chart" data-spec-id="ID"></div>
        <template class="roofgen-chart-spec" id="ID" data-search-exclude>{JSON}</template>
        <noscript><img src="SVG" alt="..." loading="lazy"></noscript>
        </div>

    The JSON is inert: ``<``, ``>``, ``&`` (and U+2028/U+2029) are written as
    ``\\u003c``-style escapes, so it contains no markup and no entities.  It is
    held in a ``<template>``, not a ``<script type="application/json">``:
    Material's instant navigation re-creates every ``<script>`` of a new page
    without its attributes and runs it, which turns JSON into a syntax error and
    drops its id.  ``data-search-exclude`` keeps the JSON out of Material's
    search index (it sits on the ``<template>`` itself: Material's search parser
    compares elements by tag name only, so an excluded ``<div>`` stops being
    excluded at the first nested ``</div>``).

    The block starts at column 0 and contains no blank line, so Python-Markdown
    passes it through untouched; surround it with blank lines.
    """
    if not _SPEC_ID_RE.fullmatch(spec_id):
        raise ValueError(
            f"chart id {spec_id!r} must start with a letter and contain only letters, "
            "digits, '-' and '_'"
        )
    if not isinstance(spec, dict):
        raise TypeError(f"chart spec must be a dict, not {type(spec).__name__}")
    try:
        payload = _script_json(spec)
    except ValueError as exc:  # NaN/inf, which JSON.parse would reject
        raise ValueError(f"chart {spec_id}: spec is not valid JSON: {exc}") from exc
    ident = html.escape(spec_id, quote=True)
    lines = [
        f'<div class="roofgen-chart-block" id="{ident}-block">',
        f'<div class="roofgen-chart" data-spec-id="{ident}"></div>',
        f'<template class="roofgen-chart-spec" id="{ident}" data-search-exclude>'
        f"{payload}</template>",
    ]
    if svg_fallback_path is not None:
        src = html.escape(svg_fallback_path, quote=True)
        alt = html.escape(_alt_text(spec, spec_id), quote=True)
        # lazy: Material's instant navigation parses new pages with scripting off,
        # so <noscript> content becomes real (hidden) elements; a lazy image that is
        # never rendered is never fetched.  Browsers without scripts load it eagerly.
        lines.append(f'<noscript><img src="{src}" alt="{alt}" loading="lazy"></noscript>')
    elif noscript is not None:
        note = html.escape(noscript, quote=True)
        lines.append(f'<noscript><p class="roofgen-noscript">{note}</p></noscript>')
    lines.append("</div>")
    return "\n".join(lines) + "\n"
