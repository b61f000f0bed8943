"""The site's Guide: a first-case tutorial, how to measure, and the spec reference.

The tutorial and the measuring recipes are Markdown files in ``templates/guide/``.
The reference is generated from the JSON Schemas (:mod:`roofgen.spec.fields`):
every field of a machine file and of a case file, with its type, unit, whether it
is required, its description and an example, each under an anchor
(``#case-variants-launches-measurement-time``) that ``roofgen check`` names in its
messages about unknown and missing keys.
"""

from __future__ import annotations

from typing import Any

from roofgen.datafiles import data_dir
from roofgen.site.escape import md_text
from roofgen.spec import fields as reference
from roofgen.spec.ids import FIRST_DATE, LAST_DATE, MAX_TEXT, MAX_TITLE_LENGTH

__all__ = [
    "CI_PATH",
    "FIRST_CASE_PATH",
    "GUIDE_NAV",
    "MEASURE_PATH",
    "PYTHON_PATH",
    "REFERENCE_PATH",
    "guide_pages",
]

FIRST_CASE_PATH = "guide/first-case/index.md"
MEASURE_PATH = "guide/measure/index.md"
REFERENCE_PATH = "guide/reference/index.md"
CI_PATH = "guide/ci/index.md"
PYTHON_PATH = "guide/python/index.md"
#: (title, docs path) of the Guide section of the navigation, in order.
GUIDE_NAV = (
    ("Your first case", FIRST_CASE_PATH),
    ("How to measure", MEASURE_PATH),
    ("Review in CI", CI_PATH),
    ("Python and notebooks", PYTHON_PATH),
    ("Spec reference", REFERENCE_PATH),
)
_STATIC = {
    FIRST_CASE_PATH: "first-case.md",
    MEASURE_PATH: "measure.md",
    CI_PATH: "ci.md",
    PYTHON_PATH: "python.md",
}
_KINDS = (("machine", "Machine files"), ("case", "Case files"))


def guide_pages(generated: str) -> dict[str, str]:
    """docs path -> Markdown of every Guide page; ``generated`` is the header line."""
    pages = {
        path: generated
        + (data_dir("templates") / "guide" / name).read_text("utf-8").rstrip()
        + "\n"
        for path, name in _STATIC.items()
    }
    pages[REFERENCE_PATH] = generated + reference_page()
    pages[MEASURE_PATH] = pages[MEASURE_PATH].replace(NCU_TABLE_MARK, _ncu_table())
    return pages


#: Where the Nsight Compute metric table goes in measure.md.
NCU_TABLE_MARK = "<!-- ncu-metric-table -->"


def _ncu_table() -> str:
    from roofgen.importers.ncu_table import markdown_table

    return markdown_table()


def reference_page() -> str:
    lines = [
        "# Spec reference",
        "",
        "Every key of a machine file and of a case file, generated from the JSON Schemas "
        "this roofgen checks against (`roofgen schema machine`, `roofgen schema case`; "
        "`roofgen init` writes them to `.roofgen/` for editors). A path such as "
        "`variants[].launches[].measurement.time` reads: the `time` of the `measurement` "
        "of every launch of every variant; `<level>` stands for a key the file chooses "
        "(here a memory level's id). `roofgen check` names the entry of a key it does not "
        "know, or misses, by its anchor: `(see reference: case-variants-launches-measurement)`.",
        "",
        "Quantities are written as people write them: `1.42 ms`, `1.555 TB/s`, "
        "`312 TFLOP/s`, `40 GiB`; decimal and binary prefixes are exact, and a plain "
        "number is in the SI base unit the entry names.",
        "",
        "Every quantity, in its SI base unit, is 0 or from 1e-60 to 1e60 in size, and so "
        "is every other number of a spec (a sweep's weight, an occupancy); a count (calls, "
        "launches, repeats, grid and block sizes, shape keys) is at most 2^53. These "
        "bounds lie some thirty orders of magnitude beyond any measurement; within them, "
        "the products and ratios roofgen computes stay finite, with no division by zero. "
        f"A text holds at most {MAX_TEXT:,} characters (a case's title "
        f"{MAX_TITLE_LENGTH:,}), and a case's date lies between {FIRST_DATE} and {LAST_DATE}.",
        "",
    ]
    for kind, title in _KINDS:
        root = reference._root(kind)
        intro = f"A file with `kind: {kind}`. {md_text(root.get('description', ''))}"
        lines += [f"## {title} {{#{kind}}}", "", intro, ""]
        for f in reference.fields(kind):
            lines += _entry(root, f)
    return "\n".join(lines).rstrip() + "\n"


def _entry(root: dict[str, Any], f: reference.Field) -> list[str]:
    out = [f"### `{f.display}` {{#{f.anchor}}}", ""]
    facts = ["**required**" if f.required else "optional"]
    facts.append(reference.type_text(root, f.schema))
    unit = reference.unit_text(root, f.schema)
    if unit:
        facts.append(f"unit {unit}")
    if "default" in f.schema:
        facts.append(f"default `{f.schema['default']}`")
    out += [md_text(" · ".join(facts)), ""]
    if f.pattern is not None:
        out += [f"Keys match `{f.key}`.", ""]
    elif f.key.startswith("<"):
        out += [f"`{f.key}`: a key the file chooses.", ""]
    if f.description:
        out += [md_text(f.description), ""]
    if f.ref is not None:
        out += [f"It holds the same fields as [the launch's measurement](#{f.ref}).", ""]
    example = _example(root, f)
    if example:
        out += ["```yaml", example, "```", ""]
    return out


def _example(root: dict[str, Any], f: reference.Field) -> str:
    from roofgen.spec.yamltext import flow, scalar

    value = reference.example(f)
    if value is None and "const" in f.schema:
        value = f.schema["const"]
    if value is None:
        written = reference.quantity_example(root, f.schema)
        value = written.split(" or ")[0] if written else None
    if value is None:
        return ""
    if f.pattern is not None:  # the first key the pattern allows
        return f"{scalar(f.key.split('|')[0].split('[')[0])}: {flow(value)}"
    if f.key.startswith("<"):
        return flow(value)
    return f"{scalar(f.key)}: {flow(value)}"
