"""Layout checks of drawn charts, read from the rendered SVG in a browser.

:func:`probe_page` runs :data:`PROBE_JS` over every chart of a page (vega-embed's SVG
inside ``div.roofgen-chart``, or a whole SVG document opened by itself) and returns,
per chart, what a reader would trip over:

* two visible texts whose oriented boxes overlap (a diagonal label is judged by its
  turned box, read from the text's box in its own coordinates and its screen matrix);
  a white halo drawn under a label is not a text of its own;
* a text over a data point (a symbol mark outside the legend that describes itself);
* a data point mostly covered by one of another colour (two levels on one spot);
* a legend entry whose colour no drawn mark has;
* a log axis with fewer than two labelled ticks per decade, and log-log plots whose
  decades are not equally long on both axes;
* tick text smaller than 11 px on screen;
* vega-embed's action button over a text.

Texts clipped away (outside their group's clip rectangle) and empty labels are not
texts. Everything is measured in screen pixels after CSS scaling.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

#: Smallest tick text on the page, in CSS pixels.
MIN_TICK_PX = 11.0

PROBE_JS = r"""
(root) => {
  const INSET = 1.0;  // px taken off each side of a box: touching is not overlapping
  function visible(el) {
    for (let e = el; e && e.nodeType === 1; e = e.parentNode) {
      const cs = getComputedStyle(e);
      if (cs.display === 'none' || cs.visibility === 'hidden') return false;
      if (parseFloat(e.getAttribute('opacity') ?? '1') === 0) return false;
      const fillOpacity = parseFloat(e.getAttribute('fill-opacity') ?? '1');
      if (fillOpacity === 0 && e.tagName === 'text') return false;
      if (e.tagName === 'svg' && e.parentNode && e.parentNode.nodeType !== 1) break;
    }
    return true;
  }
  function quad(el) {
    const b = el.getBBox();
    const m = el.getScreenCTM();
    if (!m || b.width === 0 || b.height === 0) return null;
    const x0 = b.x + INSET, x1 = b.x + b.width - INSET;
    // glyph boxes include the line's leading: keep the ink's middle 80 %
    const y0 = b.y + b.height * 0.12, y1 = b.y + b.height * 0.9;
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]].map(([x, y]) => [
      m.a * x + m.c * y + m.e + window.scrollX, m.b * x + m.d * y + m.f + window.scrollY]);
  }
  function rect(r, inset) {
    const x0 = r.left + inset + window.scrollX, x1 = r.right - inset + window.scrollX;
    const y0 = r.top + inset + window.scrollY, y1 = r.bottom - inset + window.scrollY;
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]];
  }
  function clipRect(el) {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode) {
      const ref = e.getAttribute('clip-path');
      if (!ref) continue;
      const id = ref.replace(/^url\(["']?#/, '').replace(/["']?\)$/, '');
      const cp = (e.ownerDocument || document).getElementById(id);
      const shape = cp && cp.firstElementChild;
      if (!shape) return null;
      const box = shape.getBBox(), m = e.getScreenCTM();
      return [m.a * box.x + m.e + window.scrollX, m.d * box.y + m.f + window.scrollY,
              m.a * (box.x + box.width) + m.e + window.scrollX,
              m.d * (box.y + box.height) + m.f + window.scrollY];
    }
    return null;
  }
  function role(el) {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode) {
      const c = e.getAttribute('class') || '';
      const m = c.match(new RegExp('role-(axis-label|axis-title|legend-label|legend-title|' +
        'title-text|title-subtitle|legend-symbol|legend|axis)'));
      if (m) return m[1];
      if (c.includes('role-mark')) return 'mark';
    }
    return 'other';
  }
  function layer(el) {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode) {
      const c = e.getAttribute('class') || '';
      if (c.includes('role-mark')) return c;
    }
    return '';
  }
  function inLegend(el) {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode) {
      if ((e.getAttribute('class') || '').includes('role-legend')) return true;
    }
    return false;
  }
  function paint(el) {
    const f = el.getAttribute('fill'), s = el.getAttribute('stroke');
    return [f, s].filter(c => c && c !== 'none' && c !== 'transparent').map(c => c.toLowerCase());
  }
  function axisOf(el) {
    for (let e = el.parentNode; e && e.nodeType === 1; e = e.parentNode) {
      const c = e.getAttribute('class') || '';
      if (c.includes('role-axis') && !c.includes('role-axis-')) return e;
    }
    return null;
  }
  const texts = [], axes = new Map();
  const ids = new WeakMap();
  let axisCount = 0;
  for (const el of root.querySelectorAll('text')) {
    const t = (el.textContent || '').trim();
    if (!t || !visible(el)) continue;
    const stroke = (el.getAttribute('stroke') || '').toLowerCase();
    if (stroke === 'white' || stroke === '#fff' || stroke === '#ffffff') continue;  // a halo
    const q = quad(el);
    if (!q) continue;
    const clip = clipRect(el);
    if (clip) {
      const cx = q.reduce((s, p) => s + p[0], 0) / 4, cy = q.reduce((s, p) => s + p[1], 0) / 4;
      if (cx < clip[0] || cx > clip[2] || cy < clip[1] || cy > clip[3]) continue;
    }
    const m = el.getScreenCTM();
    const px = parseFloat(getComputedStyle(el).fontSize) * Math.hypot(m.a, m.b);
    const r = role(el);
    const item = {text: t, quad: q, role: r, px: px, layer: layer(el)};
    texts.push(item);
    if (r === 'axis-label') {
      const ax = axisOf(el);
      if (ax) {
        if (!ids.has(ax)) ids.set(ax, axisCount++);
        const key = ids.get(ax);
        if (!axes.has(key)) {
          axes.set(key, {label: ax.getAttribute('aria-label') || '', ticks: []});
        }
        const b = el.getBoundingClientRect();
        axes.get(key).ticks.push({text: t, x: (b.left + b.right) / 2, y: (b.top + b.bottom) / 2});
      }
    }
  }
  const points = [];
  // data points: symbols that describe themselves (arrowheads and legend symbols do not)
  for (const el of root.querySelectorAll('g.mark-symbol path[aria-label]')) {
    if (inLegend(el) || !visible(el)) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const op = parseFloat(el.getAttribute('opacity') ?? '1');
    if (op < 0.3) continue;
    const clip = clipRect(el);
    const cx = (r.left + r.right) / 2 + window.scrollX;
    const cy = (r.top + r.bottom) / 2 + window.scrollY;
    if (clip && (cx < clip[0] || cx > clip[2] || cy < clip[1] || cy > clip[3])) continue;
    const desc = el.getAttribute('aria-label') || '';
    points.push({quad: rect(r, Math.min(2, r.width / 4)), layer: layer(el), desc: desc,
      paint: paint(el), box: [r.left, r.top, r.right, r.bottom],
      hollow: ['none', 'transparent'].includes(el.getAttribute('fill') || 'none') ||
        parseFloat(el.getAttribute('fill-opacity') ?? '1') === 0});
  }
  const drawn = new Set();
  for (const el of root.querySelectorAll('path, line, rect, text')) {
    if (inLegend(el) || !visible(el)) continue;
    if (!(layer(el))) continue;
    for (const c of paint(el)) drawn.add(c);
  }
  const legend = [];
  root.querySelectorAll('g.role-legend').forEach((lg, k) => {
    const symbols = [...lg.querySelectorAll('g.role-legend-symbol path')];
    const labels = [...lg.querySelectorAll('g.role-legend-label text')];
    symbols.forEach((g, i) => legend.push({
      legend: k, label: ((labels[i] || {}).textContent || '').trim(), paint: paint(g)}));
  });
  let actionQuad = null;
  const summary = root.querySelector && root.querySelector('details summary');
  if (summary) {
    const r = summary.getBoundingClientRect();
    if (r.width > 0) actionQuad = rect(r, 0);
  }
  return {texts, points, drawn: [...drawn], legend, axes: [...axes.values()], action: actionQuad};
}
"""


@dataclass
class Finding:
    """One thing wrong with a chart: its kind and the texts (or text) it is about."""

    kind: str
    what: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.what}"


@dataclass
class ChartReport:
    page: str
    chart: str
    findings: list[Finding] = field(default_factory=list)
    texts: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == kind]


def _axes_of(quad: list[list[float]]) -> list[tuple[float, float]]:
    out = []
    for i in range(2):
        (x0, y0), (x1, y1) = quad[i], quad[i + 1]
        out.append((x1 - x0, y1 - y0))
    return out


def quads_overlap(a: list[list[float]], b: list[list[float]]) -> bool:
    """Separating-axis test of two convex quadrilaterals (corner lists)."""
    for quad in (a, b):
        for ax, ay in _axes_of(quad):
            norm = math.hypot(ax, ay)
            if norm == 0:
                continue
            nx, ny = -ay / norm, ax / norm
            pa = [nx * x + ny * y for x, y in a]
            pb = [nx * x + ny * y for x, y in b]
            if max(pa) <= min(pb) or max(pb) <= min(pa):
                return False
    return True


_PREFIX = {
    "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "m": 1e-3, "µ": 1e-6, "u": 1e-6, "n": 1e-9, "p": 1e-12,
}  # fmt: skip
_NUMBER = re.compile(r"^\s*([-+]?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*([kMGTPEmµunp])?")


def tick_value(text: str) -> float | None:
    """The number a tick label writes (SI prefixes read), or None."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    value = float(match.group(1))
    prefix = match.group(2)
    rest = text[match.end() :]
    if prefix and (rest[:1].isalpha() or rest[:1] == "/" or rest == "" or rest[:1] == " "):
        value *= _PREFIX[prefix]
    return value


def _log_axis(ticks: list[dict[str, Any]]) -> tuple[float, float, bool] | None:
    """(pixels per decade, labelled ticks per decade, horizontal) of a log axis, or None
    when the axis is not logarithmic (or has fewer than two labelled numbers)."""
    pts = [(tick_value(t["text"]), t) for t in ticks]
    pts2 = [(v, t) for v, t in pts if v is not None and v > 0]
    if len(pts2) < 2 or len(pts2) < len(pts):
        return None
    xs = [t["x"] for _, t in pts2]
    horizontal = max(xs) - min(xs) > max(t["y"] for _, t in pts2) - min(t["y"] for _, t in pts2)
    pos = [(t["x"] if horizontal else t["y"]) for _, t in pts2]
    vals = [v for v, _ in pts2]
    if max(vals) / min(vals) < 9.99:
        return None
    order = sorted(range(len(vals)), key=lambda i: vals[i])
    if len(vals) >= 3:
        logs = [math.log10(vals[i]) for i in order]
        ps = [pos[i] for i in order]
        lins = [vals[i] for i in order]

        def resid(xs: list[float]) -> float:
            n = len(xs)
            mx, my = sum(xs) / n, sum(ps) / n
            sxx = sum((x - mx) ** 2 for x in xs) or 1e-30
            k = sum((x - mx) * (y - my) for x, y in zip(xs, ps, strict=True)) / sxx
            return sum((y - my - k * (x - mx)) ** 2 for x, y in zip(xs, ps, strict=True))

        if resid(logs) > resid(lins):
            return None
    lo, hi = order[0], order[-1]
    px_per_decade = abs(pos[hi] - pos[lo]) / math.log10(vals[hi] / vals[lo])
    return px_per_decade, len(vals), horizontal


def _overlaps(texts: list[dict[str, Any]]) -> list[Finding]:
    return [
        Finding("overlap", f"{a['text']!r} on {b['text']!r}")
        for i, a in enumerate(texts)
        for b in texts[i + 1 :]
        if quads_overlap(a["quad"], b["quad"])
    ]


def _on_points(texts: list[dict[str, Any]], points: list[dict[str, Any]]) -> list[Finding]:
    out = []
    for t in texts:
        hit = next((p for p in points if quads_overlap(t["quad"], p["quad"])), None)
        if hit is not None:
            out.append(
                Finding("text-on-point", f"{t['text']!r} on point {hit['desc'] or hit['layer']!r}")
            )
    return out


def _ring_round(ring: dict[str, Any], dot: dict[str, Any]) -> bool:
    """A hollow point at least 1.3 times as wide as the other: a ring round it, both seen."""
    width = ring["box"][2] - ring["box"][0]
    return bool(ring["hollow"]) and width >= 1.3 * (dot["box"][2] - dot["box"][0])


def _hidden_points(points: list[dict[str, Any]]) -> list[Finding]:
    """Points of different colours (levels, precisions) drawn mostly on each other: more
    than half of the smaller one covered."""
    out = []
    if len(points) > 400:
        return out
    for i, a in enumerate(points):
        for b in points[i + 1 :]:
            if set(a["paint"]) == set(b["paint"]) or _ring_round(a, b) or _ring_round(b, a):
                continue
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a["box"], b["box"]
            w = min(ax1, bx1) - max(ax0, bx0)
            h = min(ay1, by1) - max(ay0, by0)
            smaller = min((ax1 - ax0) * (ay1 - ay0), (bx1 - bx0) * (by1 - by0))
            if w > 0 and h > 0 and w * h > smaller / 2:
                out.append(Finding("point-hidden", f"{a['desc']!r} and {b['desc']!r}"))
    return out


def _legend(data: dict[str, Any]) -> list[Finding]:
    """Entries of colour legends (those whose symbols differ in colour) whose colour no
    drawn mark has."""
    drawn = set(data["drawn"])
    colours: dict[int, set[str]] = {}
    for entry in data["legend"]:
        colours.setdefault(entry["legend"], set()).update(entry["paint"])
    return [
        Finding("legend-undrawn", f"legend entry {e['label']!r} ({', '.join(e['paint'])})")
        for e in data["legend"]
        if len(colours[e["legend"]]) > 1 and e["paint"] and not drawn.intersection(e["paint"])
    ]


def _ticks(axes: list[dict[str, Any]]) -> list[Finding]:
    out = []
    logs = []
    for ax in axes:
        got = _log_axis(ax["ticks"])
        if got is None:
            continue
        logs.append(got)
        ticks = [t["text"] for t in ax["ticks"]]
        values = sorted(v for v in (tick_value(t) for t in ticks) if v)
        decades = math.log10(values[-1] / values[0])
        if decades >= 1 and got[1] < 2 * decades - 0.01:
            out.append(Finding("sparse-ticks", f"{ax['label']!r}: {ticks}"))
    horiz = [a for a in logs if a[2]]
    vert = [a for a in logs if not a[2]]
    if len(horiz) == 1 and len(vert) == 1:
        h, v = horiz[0][0], vert[0][0]
        if abs(h - v) / max(h, v) > 0.03:
            out.append(Finding("unequal-decades", f"x {h:.0f} px a decade, y {v:.0f} px a decade"))
    return out


#: Datasets whose labels are hidden on purpose: the machine's other ceilings, shown by a
#: check box of the interactive precision chart.
HIDDEN = frozenset({"others"})


def roof_labels(spec: dict[str, Any] | None) -> list[str]:
    """The label of every roof a spec draws: each row with a label position (``lx``) and
    a ``text`` (or a ``label``, where the text is the tooltip's; an empty one is a label
    left out for want of room); none of :data:`HIDDEN`."""
    if not spec:
        return []
    return [
        row.get("label", row.get("text"))
        for name, rows in spec.get("datasets", {}).items()
        if name not in HIDDEN
        for row in rows
        if isinstance(row, dict) and "lx" in row and row.get("label", row.get("text"))
    ]


def judge(
    page: str, chart: str, data: dict[str, Any], spec: dict[str, Any] | None = None
) -> ChartReport:
    """The findings of one chart's probe data (what :data:`PROBE_JS` returned), and of its
    spec's roofs (each must have a visible label)."""
    texts = data["texts"]
    report = ChartReport(page, chart, texts=texts)
    report.findings += _overlaps(texts)
    report.findings += _on_points(texts, data["points"])
    report.findings += [
        Finding("small-ticks", f"{t['text']!r} is {t['px']:.1f} px")
        for t in texts
        if t["role"] == "axis-label" and t["px"] < MIN_TICK_PX - 0.05
    ]
    if data.get("action"):
        report.findings += [
            Finding("action-on-text", f"menu button on {t['text']!r}")
            for t in texts
            if quads_overlap(t["quad"], data["action"])
        ]
    report.findings += _hidden_points(data["points"])
    report.findings += _legend(data)
    report.findings += _ticks(data["axes"])
    shown = {t["text"] for t in texts}
    report.findings += [
        Finding("roof-unlabelled", f"no visible label {label!r}")
        for label in roof_labels(spec)
        if label not in shown
    ]
    return report


def probe_page(
    page: Any,
    page_name: str,
    selector: str = "div.roofgen-chart",
    spec: dict[str, Any] | None = None,
) -> list[ChartReport]:
    """Probe every chart (``selector``) of an open page; a page that is an SVG document is
    one chart."""
    is_svg = page.evaluate("() => document.documentElement.tagName.toLowerCase() === 'svg'")
    if is_svg:
        data = page.evaluate(f"() => ({PROBE_JS})(document.documentElement)")
        return [judge(page_name, "svg", data, spec)]
    reports = []
    for handle in page.query_selector_all(selector):
        name = handle.get_attribute("data-spec-id") or "chart"
        data = handle.evaluate(f"el => ({PROBE_JS})(el)")
        text = page.evaluate(_SPEC_TEXT, name)
        reports.append(judge(page_name, name, data, json.loads(text) if text else None))
    return reports


_SPEC_TEXT = """id => {
  const t = [...document.querySelectorAll('template[id]')].find(e => e.id === id);
  return t ? t.content.textContent : null;
}"""
