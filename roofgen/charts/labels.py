"""Label layout computed when a spec is built: the axes' domains, the plot's size and every
label's text are known, so labels are placed in pixels, deterministically, clear of each
other and of the data points.

A label has candidate places (its preferred one first); :func:`place` takes the labels in
order and gives each the first candidate that overlaps nothing placed before and no
obstacle (data points), inside the plot. A label with no free candidate takes the one
that overlaps least: every label is drawn. Boxes are oriented (a label along a diagonal
roof is judged by its turned box). Text widths are estimated from DejaVu Sans' advance
widths (the sans-serif of Debian's browsers, and wider than Helvetica or Arial), so a
label takes at least the room it needs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Box", "Plot", "clusters", "place", "place_optional", "side_by_side", "text_width"]

# DejaVu Sans advance widths, in ems.
_WIDTHS = {
    **dict.fromkeys("0123456789", 0.636),
    " ": 0.318, ".": 0.318, ",": 0.318, ":": 0.337, "/": 0.337, "(": 0.390, ")": 0.390,
    "-": 0.361, "%": 0.950, "+": 0.838, "=": 0.838, "×": 0.838, "µ": 0.636, "→": 0.838,
    "A": 0.684, "B": 0.686, "C": 0.698, "D": 0.770, "E": 0.632, "F": 0.575, "G": 0.775,
    "H": 0.752, "I": 0.295, "J": 0.295, "K": 0.656, "L": 0.557, "M": 0.863, "N": 0.748,
    "O": 0.787, "P": 0.603, "Q": 0.787, "R": 0.695, "S": 0.635, "T": 0.611, "U": 0.732,
    "V": 0.684, "W": 0.989, "X": 0.685, "Y": 0.611, "Z": 0.685,
    "a": 0.613, "b": 0.635, "c": 0.550, "d": 0.635, "e": 0.615, "f": 0.352, "g": 0.635,
    "h": 0.634, "i": 0.278, "j": 0.278, "k": 0.579, "l": 0.278, "m": 0.974, "n": 0.634,
    "o": 0.612, "p": 0.635, "q": 0.635, "r": 0.411, "s": 0.521, "t": 0.392, "u": 0.634,
    "v": 0.592, "w": 0.818, "x": 0.592, "y": 0.592, "z": 0.525,
}  # fmt: skip
_GAP = 3.0  # pixels between a label and its line


def text_width(text: str, size: float) -> float:
    """Width in pixels of ``text`` at font size ``size`` (a little more than drawn)."""
    return size * sum(_WIDTHS.get(ch, 0.75) for ch in text) * 1.03 + 2


@dataclass(frozen=True)
class Box:
    """A rectangle ``w`` by ``h`` pixels centred on (``cx``, ``cy``), turned by ``angle``
    degrees (clockwise on screen, as Vega turns text)."""

    cx: float
    cy: float
    w: float
    h: float
    angle: float = 0.0

    def corners(self) -> list[tuple[float, float]]:
        return list(self._corners())

    # Both kept on the instance once computed: a candidate place is tested against
    # every label and obstacle near it.
    def _corners(self) -> tuple[tuple[float, float], ...]:
        known = self.__dict__.get("_c")
        if known is None:
            a = math.radians(self.angle)
            ux, uy = math.cos(a), math.sin(a)
            vx, vy = -uy, ux
            hw, hh = self.w / 2, self.h / 2
            known = self.__dict__["_c"] = tuple(
                (self.cx + sx * hw * ux + sy * hh * vx, self.cy + sx * hw * uy + sy * hh * vy)
                for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
            )
        return known

    def extent(self) -> tuple[float, float]:
        """Half the width and half the height of the upright box around this one."""
        known = self.__dict__.get("_e")
        if known is None:
            a = math.radians(self.angle)
            c, s = abs(math.cos(a)), abs(math.sin(a))
            hw, hh = self.w / 2, self.h / 2
            known = self.__dict__["_e"] = (hw * c + hh * s, hw * s + hh * c)
        return known

    def apart(self, other: Box) -> bool:
        """Whether the upright boxes around both are apart by more than rounding (then
        so are the boxes): a test cheaper than :meth:`overlaps`, never wrong when true."""
        (ex, ey), (ox, oy) = self.extent(), other.extent()
        return abs(self.cx - other.cx) > ex + ox + 1e-6 or abs(self.cy - other.cy) > ey + oy + 1e-6

    def overlaps(self, other: Box) -> bool:
        """Separating-axis test of two oriented rectangles."""
        return not self.apart(other) and self._crossing(other)

    def _crossing(self, other: Box) -> bool:
        """:meth:`overlaps` for boxes whose upright bounds are not :meth:`apart`."""
        if self.angle % 180 == 0 and other.angle % 180 == 0:
            return (
                abs(self.cx - other.cx) < (self.w + other.w) / 2
                and abs(self.cy - other.cy) < (self.h + other.h) / 2
            )
        a, b = self._corners(), other._corners()
        for nx, ny, lo, hi in self._axes():
            pb = [nx * x + ny * y for x, y in b]
            if hi <= min(pb) or max(pb) <= lo:
                return False
        for nx, ny, lo, hi in other._axes():
            pa = [nx * x + ny * y for x, y in a]
            if max(pa) <= lo or hi <= min(pa):
                return False
        return True

    def _axes(self) -> tuple[tuple[float, float, float, float], ...]:
        """The normals of two of the box's edges, each with the interval the box's own
        corners project to on it (the separating axes of :meth:`overlaps`)."""
        known = self.__dict__.get("_a")
        if known is None:
            q = self._corners()
            axes = []
            for i in range(2):
                ex, ey = q[i + 1][0] - q[i][0], q[i + 1][1] - q[i][1]
                nx, ny = -ey, ex
                own = [nx * x + ny * y for x, y in q]
                axes.append((nx, ny, min(own), max(own)))
            known = self.__dict__["_a"] = tuple(axes)
        return known

    def inside(self, width: float, height: float) -> bool:
        return all(0 <= x <= width and 0 <= y <= height for x, y in self._corners())


@dataclass(frozen=True)
class Plot:
    """The plot area of a log-log chart: data coordinates to pixels and back."""

    xdom: tuple[float, float]
    ydom: tuple[float, float]
    width: float
    height: float

    def px(self, x: float, y: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.xdom, self.ydom
        fx = math.log10(x / x0) / math.log10(x1 / x0)
        fy = math.log10(y / y0) / math.log10(y1 / y0)
        return fx * self.width, (1 - fy) * self.height

    def data(self, px: float, py: float) -> tuple[float, float]:
        (x0, x1), (y0, y1) = self.xdom, self.ydom
        x = x0 * (x1 / x0) ** (px / self.width)
        y = y0 * (y1 / y0) ** (1 - py / self.height)
        return x, y

    def diagonal_angle(self) -> float:
        """Screen angle (degrees clockwise, 0 to 360, as Vega-Lite wants) of a slope-1 line
        (a bandwidth roof)."""
        x_px = self.width / math.log10(self.xdom[1] / self.xdom[0])
        y_px = self.height / math.log10(self.ydom[1] / self.ydom[0])
        return 360.0 - math.degrees(math.atan2(y_px, x_px))

    def horizontal_candidates(
        self, y: float, x_from: float, w: float, h: float, steps: int = 24
    ) -> list[Box]:
        """Places for a label of a horizontal line at ``y`` drawn from ``x_from``
        rightwards: right-aligned at the plot's edge above, then below the line, then
        moving left in steps; then the same stacked one and two lines further out."""
        _, py = self.px(self.xdom[0], y)
        left = max(0.0, self.px(x_from, y)[0]) if x_from > 0 else 0.0
        right = self.width - 4
        out = []
        span = max(right - left - w, 0.0)
        # next to the line first; then stacked a line or two further out
        for stack in range(3):
            for k in range(steps + 1):
                cx = right - w / 2 - span * k / steps
                for side in (-1, 1):
                    out.append(Box(cx, py + side * (h / 2 + _GAP + stack * h), w, h))
        return out

    def segment(self, x1: float, y1: float, x2: float, y2: float, thick: float = 2.0) -> Box:
        """The box a line from (x1, y1) to (x2, y2) takes on screen, ``thick`` pixels wide:
        an obstacle, so that a label keeps off the other roofs' lines."""
        (ax, ay), (bx, by) = self.px(x1, y1), self.px(x2, y2)
        length = math.hypot(bx - ax, by - ay)
        angle = math.degrees(math.atan2(by - ay, bx - ax)) % 360
        return Box((ax + bx) / 2, (ay + by) / 2, length, thick, angle)

    def point_candidates(self, x: float, y: float, w: float, h: float, r: float = 6) -> list[Box]:
        """Places for a point's direct label: right of it, left, above, below, then the
        corners, each ``r`` pixels clear of the point's centre."""
        px, py = self.px(x, y)
        dx, dy = r + w / 2, r + h / 2
        offsets = (
            (dx, 0), (-dx, 0), (0, -dy), (0, dy),
            (dx, -dy), (-dx, -dy), (dx, dy), (-dx, dy),
            (dx + 12, 0), (-dx - 12, 0), (0, -dy - 12), (0, dy + 12),
        )  # fmt: skip
        return [Box(px + ox, py + oy, w, h) for ox, oy in offsets]

    def vertical_candidates(self, x: float, w: float, h: float, steps: int = 12) -> list[Box]:
        """Places for a label read bottom to top beside the vertical line at ``x``: from
        the top of the plot down, left then right of the line."""
        px, _ = self.px(x, self.ydom[0])
        span = max(self.height - 8 - w, 0.0)
        out = []
        for k in range(steps + 1):
            cy = 4 + w / 2 + span * k / steps
            for side in (-1, 1):
                out.append(Box(px + side * (h / 2 + _GAP), cy, w, h, 270.0))
        return out

    def diagonal_candidates(
        self, slope_value: float, x_lo: float, x_hi: float, w: float, h: float
    ) -> list[Box]:
        """Places for a label along the diagonal ``y = slope_value * x`` between ``x_lo``
        and ``x_hi``: its middle first, then out towards both ends, above then below."""
        angle = self.diagonal_angle()
        a = math.radians(angle)
        nx, ny = math.sin(a), -math.cos(a)  # normal pointing up-left of the line
        out = []
        if x_hi <= x_lo:
            x_hi = x_lo * 1.0001
        for t in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9, 0.05, 0.95):
            x = x_lo * (x_hi / x_lo) ** t
            px, py = self.px(x, slope_value * x)
            for side in (1, -1):
                d = side * (h / 2 + _GAP)
                out.append(Box(px + nx * d, py + ny * d, w, h, angle))
        return out


def place(
    candidates: Sequence[Sequence[Box]],
    obstacles: Sequence[Box],
    width: float,
    height: float,
    fixed: Sequence[Box] = (),
) -> list[Box]:
    """One box per label, in order: the first candidate inside the plot that overlaps no
    box placed before (nor a ``fixed`` label placed earlier) and no obstacle, else the one
    with the fewest overlaps (another label weighs more than an obstacle)."""
    return [box for box, _ in _place(candidates, obstacles, width, height, fixed, False)]


def place_optional(
    candidates: Sequence[Sequence[Box]],
    obstacles: Sequence[Box],
    width: float,
    height: float,
    fixed: Sequence[Box] = (),
) -> list[Box | None]:
    """Like :func:`place`, for labels that may be left out (a point's direct label, whose
    text is also in its tooltip): ``None`` where no candidate is free."""
    placed = _place(candidates, obstacles, width, height, fixed, True)
    return [box if free else None for box, free in placed]


def _place(
    candidates: Sequence[Sequence[Box]],
    obstacles: Sequence[Box],
    width: float,
    height: float,
    fixed: Sequence[Box],
    optional: bool,
) -> list[tuple[Box, bool]]:
    placed: list[Box] = list(fixed)
    chosen: list[tuple[Box, bool]] = []
    grid = _Grid(obstacles)
    for options in candidates:
        best: Box | None = None
        best_cost = math.inf
        for i, box in enumerate(options):
            cost = i * 1e-3 + (0.0 if box.inside(width, height) else 1000.0)
            if cost < best_cost:  # another label weighs more than an obstacle
                cost = _add_overlaps(cost, box, placed, 100.0, best_cost)
            if cost < best_cost:
                cost = _add_overlaps(cost, box, grid.near(box), 1.0, best_cost)
            if cost < best_cost:
                best, best_cost = box, cost
            if cost < 1:
                break
        assert best is not None, "a label needs at least one candidate place"
        free = best_cost < 1
        if free or not optional:
            placed.append(best)
        chosen.append((best, free))
    return chosen


def _add_overlaps(
    cost: float, box: Box, others: Sequence[Box], weight: float, best_cost: float
) -> float:
    """``cost`` plus ``weight`` for each of ``others`` that ``box`` overlaps, counted
    until the cost reaches ``best_cost`` (more would not change the choice)."""
    for other in others:
        if cost >= best_cost:
            break
        cost += weight * box.overlaps(other)
    return cost


def clusters(pixels: Sequence[tuple[float, float]], reach: float = 7.0) -> list[list[int]]:
    """Indices of ``pixels`` grouped by spot: a pixel joins the first group whose first
    pixel is within ``reach`` on both axes (marks that close cover each other)."""
    cells: dict[tuple[int, int], list[int]] = {}
    groups: list[list[int]] = []
    anchors: list[tuple[float, float]] = []
    for i, (px, py) in enumerate(pixels):
        cx, cy = math.floor(px / reach), math.floor(py / reach)
        found = next(
            (
                g
                for dx in (-1, 0, 1)
                for dy in (-1, 0, 1)
                for g in cells.get((cx + dx, cy + dy), ())
                if abs(anchors[g][0] - px) <= reach and abs(anchors[g][1] - py) <= reach
            ),
            None,
        )
        if found is None:
            found = len(groups)
            groups.append([])
            anchors.append((px, py))
            cells.setdefault((cx, cy), []).append(found)
        groups[found].append(i)
    return groups


def side_by_side(
    rows: Sequence[dict[str, Any]], plot: Plot, order: Sequence[str], gap: float = 9.0
) -> None:
    """Move the ``x`` of rows of different ``role`` that would be drawn on one spot (see
    :func:`clusters`) so that they sit side by side, in ``order`` from left to right,
    about the spot: each stays visible in its own colour and shape."""
    rank = {role: i for i, role in enumerate(order)}
    drawn = [r for r in rows if r["x"] > 0 and r["y"] > 0]
    pixels = [plot.px(r["x"], r["y"]) for r in drawn]
    for group in clusters(pixels):
        roles = sorted({drawn[i]["role"] for i in group}, key=lambda r: (rank.get(r, len(rank)), r))
        if len(roles) < 2:
            continue
        for i in group:
            shift = (roles.index(drawn[i]["role"]) - (len(roles) - 1) / 2) * gap
            px, py = pixels[i]
            drawn[i]["x"] = plot.data(px + shift, py)[0]


class _Grid:
    """Obstacles bucketed by a grid of ``cell`` pixels, to find those near a box fast.
    An obstacle spanning many cells (a roof's line) is near every box: it is checked
    against each, which costs less than finding it in every cell."""

    _BIG = 16  # cells

    def __init__(self, boxes: Sequence[Box], cell: float = 40.0) -> None:
        self.cell = cell
        self.cells: dict[tuple[int, int], list[Box]] = {}
        self.big: list[Box] = []
        for box in boxes:
            keys = self._keys(box)
            if len(keys) > self._BIG:
                self.big.append(box)
                continue
            for key in keys:
                self.cells.setdefault(key, []).append(box)

    def _keys(self, box: Box) -> list[tuple[int, int]]:
        """The cells the upright box around ``box`` touches: two boxes that overlap
        have upright boxes that meet, so they share a cell."""
        ex, ey = box.extent()
        ex, ey, c = ex + 1e-6, ey + 1e-6, self.cell  # rounding: as Box.apart allows
        return [
            (i, j)
            for i in range(math.floor((box.cx - ex) / c), math.floor((box.cx + ex) / c) + 1)
            for j in range(math.floor((box.cy - ey) / c), math.floor((box.cy + ey) / c) + 1)
        ]

    def near(self, box: Box) -> list[Box]:
        """Every obstacle that can overlap ``box`` (and some that do not)."""
        seen: dict[int, Box] = {}
        for key in self._keys(box):
            for other in self.cells.get(key, ()):
                seen[id(other)] = other
        return [*self.big, *seen.values()]
