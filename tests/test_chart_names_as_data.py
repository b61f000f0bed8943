"""Names from a spec reach a chart as data, never as Vega expression source.

A level's, a link's or a wall's name is the value of the field that colour and shape
encode (and of their scale domains), so the legend shows it as it is; no expression of
the spec (``labelExpr``, ``expr``, ``test``, ``calculate``, ``filter``, ``signal``)
holds it. The names below would end a quoted string in an expression and call
``alert`` if one ever did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from test_charts import v100_input
from test_rooflines_charts import INPUTS

from roofgen.charts import RooflineInput
from roofgen.charts.common import LEGEND_FIELD, legend_names
from roofgen.charts.kinds import ChartInput, build_chart
from roofgen.charts.roofline_inputs import CommunicationInput, InstructionInput

HOSTILE = ("Evil' + alert(1) + '", 'Q" + alert(2) + "', "line\nbreak\u2028alert(3)\\")
EXPRESSION_KEYS = {"labelExpr", "expr", "test", "calculate", "filter", "signal", "update"}


def _expressions(node: Any) -> Iterator[str]:
    """Every string held under a key that Vega or Vega-Lite reads as an expression."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in EXPRESSION_KEYS and isinstance(value, str):
                yield value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item)


def _legend_domains(node: Any) -> Iterator[list[Any]]:
    """The scale domains of every channel that encodes the legend field."""
    if isinstance(node, dict):
        if node.get("field") == LEGEND_FIELD and "scale" in node:
            yield node["scale"]["domain"]
        for value in node.values():
            yield from _legend_domains(value)
    elif isinstance(node, list):
        for item in node:
            yield from _legend_domains(item)


def _hierarchical() -> RooflineInput:
    inp = v100_input()
    points = tuple(
        dataclasses.replace(p, level=HOSTILE[i % len(HOSTILE)]) for i, p in enumerate(inp.points)
    )
    return dataclasses.replace(inp, points=points)


def _instruction() -> InstructionInput:
    inp = INPUTS["instruction"]
    assert isinstance(inp, InstructionInput)
    walls = tuple(dataclasses.replace(w, name=n) for w, n in zip(inp.walls, HOSTILE, strict=False))
    return dataclasses.replace(inp, walls=walls)


def _communication() -> CommunicationInput:
    inp = INPUTS["communication"]
    assert isinstance(inp, CommunicationInput)
    link = inp.links[0]
    links = (
        dataclasses.replace(link, name=HOSTILE[0]),
        dataclasses.replace(link, id="ib", name=HOSTILE[2], bandwidth=link.bandwidth / 12),
    )
    return dataclasses.replace(inp, links=links)


@pytest.mark.parametrize("make", [_hierarchical, _instruction, _communication])
def test_names_are_domain_values_not_expression_text(make: Any) -> None:
    inp: ChartInput = make()
    spec = build_chart(inp)
    texts = list(_expressions(spec))
    assert texts, "the chart has axis label expressions: the walk must find them"
    for text in texts:
        assert "alert(" not in text and "Evil" not in text, text
    domains = list(_legend_domains(spec))
    assert domains, "colour encodes the legend field"
    shown = {name for domain in domains for name in domain}
    used = [n for n in HOSTILE if any(n in str(v) for v in dataclasses.asdict(inp).values())]
    assert used
    for name in used:  # the legend shows the name itself
        assert any(name == s or name in s.split(" / ") for s in shown), (name, shown)


def test_a_name_two_ids_share_keeps_an_entry_each() -> None:
    assert legend_names(["a", "b", "c"], ["HBM", "HBM", "L2"]) == {
        "a": "HBM (a)",
        "b": "HBM (b)",
        "c": "L2",
    }
    assert legend_names(["a", "b"], ["NVLink", "PCIe"]) == {"a": "NVLink", "b": "PCIe"}


def test_every_row_of_a_level_carries_its_legend_name() -> None:
    spec = build_chart(_hierarchical())
    domain = next(_legend_domains(spec))
    rows = [row for rows in spec["datasets"].values() for row in rows if "role" in row]
    assert rows
    assert all(row[LEGEND_FIELD] in domain for row in rows)
