"""``roofgen new case``: a case file with every field of the case schema, commented.

The file is generated from the case schema, field by field, so it never drifts
from it: each key comes with its description as a comment. Required fields and
the fields nearly every case fills in are written with placeholder values (the
schema's examples, marked ``# TODO``); every other field is written commented
out, in its place, with an example, ready to be switched on.

The template is one of an operator kind (``--operator``, else guessed from the
kernel's or the case's id): its shape, its dtypes and the FLOPs of its operator
model on the chosen machine's units. What only a measurement can tell (the time's
median and quartiles, the bytes per memory level) is written ``TODO``, which the
schema refuses with "measure ...": an untouched file fails ``roofgen check``, each
value to measure located, and no invented number can pass for a measured one.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofgen.scaffold.operators import OPERATORS, TODO, model_work
from roofgen.spec import fields as reference
from roofgen.spec.yamltext import comment_lines, first_sentence, flow, scalar

__all__ = ["CaseTemplate", "case_template", "schema_line"]

#: Optional fields written live (with placeholders); all others are commented out.
LIVE = frozenset(
    f"case-{a}"
    for a in (
        "summary", "date", "owners", "status", "tags", "patterns",
        "narrative", "narrative-context", "narrative-hypothesis", "narrative-change",
        "narrative-result", "narrative-lessons",
        "method", "method-description", "method-gpu", "method-driver", "method-cuda",
        "method-framework", "method-clock_control", "method-cache_control",
        "kernels-name", "kernels-operator-shape", "kernels-dtypes", "kernels-description",
        "variants-name", "variants-description",
        "machines-version",
        "variants-launches-calls", "variants-launches-measurement",
        "variants-launches-measurement-time", "variants-launches-measurement-time-median",
        "variants-launches-measurement-time-q1", "variants-launches-measurement-time-q3",
        "variants-launches-measurement-time-repeats",
        "variants-launches-measurement-time-warmup",
        "variants-launches-measurement-timing", "variants-launches-measurement-clocks",
        "variants-launches-measurement-clocks-sm", "variants-launches-measurement-clocks-memory",
        "variants-launches-measurement-flops", "variants-launches-measurement-bytes",
        "variants-launches-measurement-grid", "variants-launches-measurement-block",
    )
)  # fmt: skip
#: Fields whose values are the case's real ids, not placeholders.
FIXED = frozenset(
    f"case-{a}"
    for a in (
        "roofgen", "kind", "id", "machines-id", "machines-version", "machines-sha256",
        "kernels-id", "variants-id", "variants-launches-kernel",
    )
)  # fmt: skip
#: Fields never written: the editor line at the top replaces $schema.
SKIP = frozenset({"case-schema"})


#: A special value that writes the field commented out, with the schema's example
#: (a memory clock the machine does not state, a version an unversioned machine lacks).
OFF = object()
MEASUREMENT = "case-variants-launches-measurement"


@dataclass
class CaseTemplate:
    """What the template is about: the ids it uses and the machine's data."""

    case_id: str
    machine_id: str
    machine: Mapping[str, Any]  # the machine file's data
    pin: Any  # what `machines:` lists: an id, or {id, version}
    kernel: str = "main"
    variant: str = "baseline"
    title: str | None = None
    today: str = field(default_factory=lambda: dt.date.today().isoformat())
    operator: str = "gemm"  # a key of OPERATORS

    # ----------------------------------------------------------------- machine

    def units(self) -> list[tuple[str, list[str]]]:
        return [
            (str(u["id"]), [str(p) for p in u.get("peaks", {})])
            for u in self.machine.get("compute", [])
        ]

    def levels(self) -> list[tuple[str, str]]:
        return [(str(m["id"]), str(m.get("role", ""))) for m in self.machine.get("memory", [])]

    def links(self) -> list[str]:
        return [str(k["id"]) for k in self.machine.get("links", []) or []]

    def flop_unit(self) -> tuple[str, str]:
        """The unit and precision the placeholder work runs on: BF16 on the tensor
        cores where the machine has them, else the first floating-point peak."""
        units = self.units()
        for wanted in ("bf16", "fp16", "fp32"):
            for unit, precisions in units:
                if wanted in precisions:
                    return unit, wanted
        for unit, precisions in units:
            for precision in precisions:
                if precision.startswith(("fp", "bf", "tf")):
                    return unit, precision
        unit, precisions = units[0]
        return unit, precisions[0]

    def shape(self) -> dict[str, int]:
        return dict(OPERATORS[self.operator][0])

    def dtypes(self) -> dict[str, str]:
        return dict(OPERATORS[self.operator][1])

    def work(self) -> dict[str, dict[str, str]]:
        """FLOPs (and OPs) of the operator model, by the unit and precision they run on;
        a placeholder on the first floating-point unit where the model has none."""
        kinds = {str(u["id"]): str(u.get("kind", "")) for u in self.machine.get("compute", [])}
        units = [(u, kinds[u], precisions) for u, precisions in self.units()]
        out = model_work(self.operator, self.shape(), self.dtypes(), units)
        if not out:
            unit, precision = self.flop_unit()
            out[unit] = {precision: TODO}
        return out

    def traffic(self) -> dict[str, Any]:
        """Bytes per level: only a profiler can say them, so each is a placeholder
        (device memory with reads and writes apart, the form a level may take)."""
        out: dict[str, Any] = {}
        for level, role in self.levels():
            out[level] = {"read": TODO, "write": TODO} if role == "device" else TODO
        return out

    def clocks(self) -> dict[str, str]:
        clocks = self.machine.get("clocks", {})
        out = {k: str(clocks[k]) for k in ("sm", "memory") if k in clocks}
        unit_id = self.flop_unit()[0]
        unit: dict[str, Any] = next(
            (u for u in self.machine.get("compute", []) if u.get("id") == unit_id), {}
        )
        if "clock" in unit:  # the placeholder work runs at its unit's clock (a tensor boost)
            out["sm"] = str(unit["clock"])
        return out

    def placeholder_time(self) -> dict[str, Any]:
        return {"median": TODO, "q1": TODO, "q3": TODO, "repeats": 100, "warmup": 10}

    def map_key(self, name: str) -> str:
        """A concrete key for a mapping whose keys the file chooses."""
        levels = self.levels()
        links = self.links()
        return {
            "variant": self.variant,
            "unit": self.flop_unit()[0],
            "level": levels[0][0] if levels else "hbm",
            "link": links[0] if links else "nvlink",
            "param": "n",
            "tensor": "a",
            "rule": "bytes-above-model",
        }.get(name, name)

    def special(self, anchor: str) -> tuple[bool, Any]:
        """(True, value) for fields whose value comes from the ids or the machine."""
        name = anchor.removeprefix("case-")
        m = "variants-launches-measurement-"
        values: dict[str, Any] = {
            "roofgen": 1,
            "kind": "case",
            "id": self.case_id,
            "machines-id": self.machine_id,
            "machines-version": self.pin.get("version") if isinstance(self.pin, dict) else OFF,
            "machines-sha256": _content_hash(self.machine),
            "status": "draft",
            "date": self.today,
            "kernels-id": self.kernel,
            "kernels-units": list(self.work()),
            "kernels-operator-kind": self.operator,
            "kernels-operator-shape": self.shape(),
            "kernels-dtypes": self.dtypes(),
            "variants-id": self.variant,
            "variants-machine": self.machine_id,
            "variants-launches-kernel": self.kernel,
            m + "timing": "cuda-events",
            m + "clocks-sm": self.clocks().get("sm", OFF),
            m + "clocks-memory": self.clocks().get("memory", OFF),
            m + "flops": self.work(),
            m + "model_flops": self.work(),
            m + "bytes": self.traffic(),
            m + "transactions": {self.map_key("level"): "4e8 txn"},
            m + "link_bytes": {self.map_key("link"): {"out": "1 GB", "in": "1 GB"}},
            m + "collectives-link": self.map_key("link"),
            m + "time": None,  # the object branch, with the computed median
        }
        if self.title:
            values["title"] = self.title
        if name == "variants-launches-measurement-time":
            return False, None
        if name in values:
            return True, values[name]
        if name.startswith(m + "time-") and name.removeprefix(m + "time-") in (
            "median",
            "q1",
            "q3",
            "repeats",
            "warmup",
        ):
            return True, self.placeholder_time()[name.removeprefix(m + "time-")]
        return False, None


def _content_hash(machine: Mapping[str, Any]) -> str:
    from roofgen.spec.library import content_hash

    return content_hash(dict(machine))


def _field(name: str) -> reference.Field:
    found = reference.field("case", f"case-{name}")
    assert found is not None, name
    return found


# --------------------------------------------------------------------------- writer


class _Writer:
    def __init__(self, t: CaseTemplate) -> None:
        self.t = t
        self.root = reference._root("case")
        self.children: dict[tuple[str, ...], list[reference.Field]] = {}
        for f in reference.fields("case"):
            self.children.setdefault(f.segments[:-1], []).append(f)

    # Each writer returns lines at ``indent``; commented blocks are prefixed later.

    def mapping(self, parent: tuple[str, ...], indent: int, live: bool, hint: Any) -> list[str]:
        """The fields under ``parent``; ``hint`` holds values to write (an example's,
        or a machine-dependent mapping such as the bytes per level)."""
        lines: list[str] = []
        children = [f for f in self.children.get(parent, []) if f.anchor not in SKIP]
        named = {f.key for f in children if f.pattern is None and not f.key.startswith("<")}
        chosen = [k for k in hint if k not in named] if isinstance(hint, Mapping) else []
        patterns = [f.pattern for f in children if f.pattern is not None]
        for f in children:
            if f.pattern is not None or f.key.startswith("<"):  # keys the file chooses
                if f.pattern is not None:
                    keys = [k for k in chosen if re.search(f.pattern, str(k))]
                else:
                    keys = [k for k in chosen if not any(re.search(p, str(k)) for p in patterns)]
                for i, k in enumerate(keys):
                    lines += self.field(f, indent, live, live, hint[k], key=str(k),
                                        describe=i == 0)  # fmt: skip
                if not keys and not (chosen and not live):  # an example of this form
                    on = live and f.anchor in LIVE
                    lines += self.field(f, indent, on, live, None)
                continue
            sub_hint = _hint(hint, f)
            off = self.t.special(f.anchor) == (True, OFF)
            given = isinstance(hint, Mapping) and f.key in hint
            on = live and (f.required or f.anchor in LIVE or given) and not off
            lines += self.field(f, indent, on, live, sub_hint)
        return lines

    def field(self, f: reference.Field, indent: int, on: bool, parent_live: bool, hint: Any,
              *, key: str | None = None, describe: bool = True) -> list[str]:  # fmt: skip
        if key is None:
            key = self.t.map_key(f.key[1:-1]) if f.key.startswith("<") else f.key
            if f.pattern is not None:  # precisions: a concrete one that matches
                key = _pattern_key(f.pattern)
        pad = " " * indent
        body = self.body(f, indent, on, hint)
        head = comment_lines(f.description, indent) if f.description and describe else []
        if parent_live and not on:  # switched off: comment the whole field out
            return head + [_comment_out(line, indent) for line in self._keyed(pad, key, body)]
        if parent_live:
            return head + self._keyed(pad, key, body, todo=self._todo(f))
        # inside a commented-out block: the description's first sentence at the end
        note = first_sentence(f.description) if f.description and describe else ""
        return self._keyed(pad, key, body, note=note)

    def _todo(self, f: reference.Field) -> bool:
        return f.anchor not in FIXED

    @staticmethod
    def _keyed(pad: str, key: str, body: tuple[str, Any], *, todo: bool = False,
               note: str = "") -> list[str]:  # fmt: skip
        kind, value = body
        if kind == "flow":
            text = flow(value)
            eol = ""
            if note:
                eol = f"  # {note}"
            elif todo and not (isinstance(value, str) and value.startswith("TODO")):
                eol = "  # TODO"
            return [f"{pad}{scalar(key)}: {text}{eol}"]
        head = f"{pad}{scalar(key)}:" + (f"  # {note}" if note else "")
        return [head, *value]

    def body(self, f: reference.Field, indent: int, on: bool, hint: Any) -> tuple[str, Any]:
        """('flow', value) or ('block', lines) for the field's value."""
        known, value = self.t.special(f.anchor)
        if known and value is not OFF:
            if isinstance(value, Mapping) and _is_free_map(f) and _has_children(self.children, f):
                return "block", self.mapping(f.segments, indent + 2, on, value)
            return "flow", value
        if hint is not None and (
            not _has_children(self.children, f) or not isinstance(hint, Mapping | list)
        ):
            return "flow", hint
        if f.ref is not None:  # reuses another entry: a short example
            return "flow", hint if hint is not None else {"time": "1.42 ms"}
        if _has_children(self.children, f):
            example = reference.example(f)
            if _is_free_map(f) and hint is None and example is not None:
                return "flow", example
            if _is_list(f):
                item_hint = hint[0] if isinstance(hint, list) and hint else None
                return "block", self.list_item(f.segments, indent + 2, on, item_hint)
            return "block", self.mapping(f.segments, indent + 2, on, hint)
        return "flow", self.scalar_value(f, hint)

    def list_item(self, parent: tuple[str, ...], indent: int, live: bool,
                  hint: Any) -> list[str]:  # fmt: skip
        inner = self.mapping(parent, indent + 2, live, hint)
        for i, line in enumerate(inner):  # the first key line starts the item: "- key:"
            if line.lstrip().startswith("#"):
                inner[i] = " " * indent + line.lstrip()  # its description, at the dash
                continue
            inner[i] = " " * indent + "- " + line[indent + 2 :]
            break
        return inner

    def scalar_value(self, f: reference.Field, hint: Any) -> Any:
        if hint is not None:
            return hint
        if _free_text(f.schema):
            return "TODO"  # an example sentence would read as if it were true
        example = reference.example(f)
        if example is not None:
            return example
        schema = f.schema
        if "enum" in schema:
            return schema["enum"][0]
        if "default" in schema:
            return schema["default"]
        kind = schema.get("type")
        if kind == "array":
            items = schema.get("items", {})
            if isinstance(items, Mapping) and "enum" in items:
                return [items["enum"][0]]
            return []
        if kind == "boolean":
            return False
        if kind == "integer":
            return int(schema.get("minimum", 1))
        if kind == "number":
            return float(schema.get("minimum", 1))
        dims = reference.dimensions(self.root, schema)
        if dims:
            return reference.EXAMPLES[dims[0]]
        return "TODO"


def _free_text(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "string" and not (
        {"pattern", "format", "enum", "const", "x-quantity"} & set(schema)
    )


def _hint(hint: Any, f: reference.Field) -> Any:
    if isinstance(hint, Mapping) and f.key in hint:
        return hint[f.key]
    return None


def _has_children(children: Mapping[tuple[str, ...], list[Any]], f: reference.Field) -> bool:
    return bool(children.get(f.segments))


def _is_list(f: reference.Field) -> bool:
    return any(b.get("type") == "array" for b in reference.branches(reference._root(f.kind),
                                                                    f.schema))  # fmt: skip


def _is_free_map(f: reference.Field) -> bool:
    """A mapping whose keys the file chooses (level ids, variant ids...)."""
    return isinstance(f.schema.get("additionalProperties"), Mapping) or bool(
        f.schema.get("patternProperties")
    )


def _pattern_key(pattern: str) -> str:
    shown = reference.pattern_shown(pattern)
    return shown.split("|")[0].split("[")[0]


def _comment_out(line: str, indent: int) -> str:
    """Comment a line out at ``indent`` (deeper lines keep their own indentation)."""
    return line[:indent] + "# " + line[indent:]


# --------------------------------------------------------------------------- file


def schema_line(target: Path, kind: str) -> str:
    """The editor line for a spec at ``target``: the nearest ``.roofgen/KIND.schema.json``
    (what ``roofgen init`` writes) or ``schemas/KIND.schema.json`` above it, as a
    relative path; else the schema's published id."""
    import os

    from roofgen.spec.schema import load_schema

    name = f"{kind}.schema.json"
    folder = target.resolve().parent
    for parent in (folder, *folder.parents):
        for sub in (".roofgen", "schemas"):
            candidate = parent / sub / name
            if candidate.is_file():
                relative = os.path.relpath(candidate, folder).replace(os.sep, "/")
                return f"# yaml-language-server: $schema={relative}"
    return f"# yaml-language-server: $schema={load_schema(kind)['$id']}"


def case_template(t: CaseTemplate, target: Path) -> str:
    """The text of the new case file."""
    header = [
        schema_line(target, "case"),
        *comment_lines(
            f"A new case study of a {t.operator} kernel, written by `roofgen new case` from "
            f"the case schema: every field is here with its description. Values written "
            f"TODO must be measured: `roofgen check` refuses each until it is, and says "
            f"what to measure. Fields marked `# TODO` hold examples that check: replace "
            f"them with yours (the FLOPs are the operator model's for the shape). "
            f"Commented-out fields are optional: remove the `# ` to use one. "
            f"The site's Guide explains each field (Spec reference) and how to measure "
            f"it (How to measure). Machine {t.machine_id}: `roofgen machines show "
            f"{t.machine_id}`.",
            0,
        ),
    ]
    body = _Writer(t).mapping((), 0, True, None)
    return "\n".join([*header, *body]) + "\n"


def is_placeholder(problem: Any) -> bool:
    """A problem that only says a TODO value is still to be measured."""
    return "is a placeholder: measure" in problem.message


def checked_case(t: CaseTemplate, target: Path, machine_file: Path | None) -> tuple[str, list[Any]]:
    """The case file's text, and the problems ``roofgen check --strict`` finds in it
    besides its placeholders (none, unless the schema grew a rule the template
    breaks). ``machine_file`` is the team's machine file, if the machine is not
    roofgen's library one."""
    import tempfile

    from roofgen.files import write_file
    from roofgen.pipeline import check

    text = case_template(t, target)
    with tempfile.TemporaryDirectory(prefix="roofgen-new-") as tmp:
        folder = Path(tmp)
        spec = folder / f"{t.case_id}.yaml"
        paths = [spec, *([machine_file] if machine_file is not None else [])]
        write_file(spec, text, root=folder)
        result = check(paths, display_root=folder)
        problems = [
            p
            for p in result.problems
            if p.severity.value in ("error", "warning") and not is_placeholder(p)
        ]
        return text, problems
