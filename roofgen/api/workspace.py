"""Specs loaded for notebooks and scripts: :class:`Workspace`, :class:`Results`,
charts that display offline, and case files written back with their comments.

Everything here goes through :func:`roofgen.api.check`: the same validation and
the same problems as ``roofgen check``, raised as one :class:`roofgen.SpecError`.
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import tempfile
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from roofgen.api import CheckResult, check
from roofgen.files import write_file
from roofgen.model import Case, Machine
from roofgen.problems import Problem, Severity, SpecError

__all__ = [
    "VEGA_LITE_MIME",
    "RooflineChart",
    "Results",
    "Workspace",
    "analyse",
    "chart",
    "chart_mimebundle",
    "dump_case",
    "from_dicts",
    "load",
    "machine",
]

PathLike = str | Path


class Results:
    """The analysis of a workspace: bounds, binding roofs, efficiency per launch and
    variant. ``raw`` is the :class:`roofgen.analysis.analyse.Analysis`."""

    def __init__(self, result: CheckResult):
        assert result.analysis is not None
        self._result = result
        self.raw = result.analysis

    def to_json(self) -> dict[str, Any]:
        """The document `roofgen analyze --format json` writes (output format 1)."""
        from roofgen.report.analysis import analysis_json

        return analysis_json(self.raw, self._result.problems, self._result.advice)

    def rows(self) -> list[dict[str, Any]]:
        """Flat rows, one per variant and per launch (see :mod:`roofgen.report.tables`)."""
        from roofgen.report.tables import analysis_rows

        return analysis_rows(self.to_json())

    def to_dataframe(self) -> Any:
        """A pandas DataFrame of :meth:`rows` (needs pandas: ``roofgen[notebook]``)."""
        from roofgen.report.tables import rows_dataframe

        return rows_dataframe(self.rows())

    def to_csv(self) -> str:
        """The text of `roofgen analyze --format csv`."""
        from roofgen.report.tables import rows_csv

        return rows_csv(self.rows())

    def _repr_html_(self) -> str | None:
        """The table, in Jupyter (None without pandas: the text repr is used)."""
        try:
            import pandas  # noqa: F401
        except ImportError:
            return None
        return str(self.to_dataframe()._repr_html_())

    def __repr__(self) -> str:
        n = sum(len(v.launches) for c in self.raw.cases for v in c.variants)
        return f"<roofgen.Results: {len(self.raw.cases)} case(s), {n} launch(es)>"


class Workspace:
    """Machines and cases loaded from spec files, checked and analysed."""

    def __init__(self, result: CheckResult):
        if result.specs is None or result.analysis is None:
            raise SpecError([p for p in result.problems if p.severity is Severity.ERROR])
        self._result = result
        self.files: tuple[str, ...] = result.files
        #: Warnings and notes (errors raise :class:`roofgen.SpecError` instead).
        self.problems: list[Problem] = list(result.problems)
        self.specs = result.specs
        self.machines: dict[str, Machine] = dict(result.specs.machines)
        self.cases: dict[str, Case] = {c.id: c for c in result.specs.cases}

    @property
    def check_result(self) -> CheckResult:
        return self._result

    @cached_property
    def analysis(self) -> Results:
        return Results(self._result)

    def to_dataframe(self) -> Any:
        return self.analysis.to_dataframe()

    def machine(self, machine_id: str, version: int | None = None) -> Machine:
        """A machine of the workspace, else of roofgen's library."""
        found = self.machines.get(machine_id)
        if found is not None and (version is None or found.version == version):
            return found
        return machine(machine_id, version)

    def case(self, case_id: str) -> Case:
        try:
            return self.cases[case_id]
        except KeyError:
            raise KeyError(f"no case {case_id!r} (cases: {', '.join(self.cases)})") from None

    def chart(
        self,
        selector: str,
        kernel: str | None = None,
        variant: str | None = None,
        *,
        cache_dir: Path | None = None,
    ) -> Any:
        """The hierarchical roofline of one kernel: ``chart("CASE/KERNEL[/VARIANT]")``
        or ``chart(CASE, KERNEL, VARIANT)``; with only a case id whose case has one
        kernel, that kernel. An Altair chart that displays inline without a CDN."""
        from roofgen.api import kernel_chart

        case_id, kernel, variant = _selector(selector, kernel, variant)
        if kernel is None:
            kernels = [k.id for k in self.case(case_id).kernels]
            if len(kernels) != 1:
                raise ValueError(f"case {case_id!r} has kernels {', '.join(kernels)}: name one")
            kernel = kernels[0]
        spec = kernel_chart(self._result, case_id, kernel, variant)
        return altair_chart(spec, cache_dir=cache_dir)

    def case_data(self, case_id: str) -> Any:
        """The case file's data, round-trip loaded (comments kept): edit it and pass
        it to :meth:`write_case` or :func:`dump_case`."""
        return _read_round_trip(Path(self.case(case_id).file))

    def write_case(self, case_id: str, path: PathLike | None = None, data: Any = None) -> Path:
        """Write the case (``data``, default: as loaded) to ``path`` (default: its own
        file), keeping the comments and style of an existing file."""
        target = Path(path) if path is not None else Path(self.case(case_id).file)
        if data is None:
            data = self.case_data(case_id)
        return dump_case(data, target)

    def __repr__(self) -> str:
        return (
            f"<roofgen.Workspace: {len(self.files)} file(s), {len(self.machines)} machine(s), "
            f"cases {', '.join(self.cases) or '(none)'}>"
        )


def _paths(path_or_paths: PathLike | Iterable[PathLike]) -> list[Path]:
    if isinstance(path_or_paths, (str, Path)):
        return [Path(path_or_paths)]
    return [Path(p) for p in path_or_paths]


def load(
    path_or_paths: PathLike | Iterable[PathLike],
    *,
    rules_file: PathLike | None = None,
    thresholds: Any = None,
) -> Workspace:
    """Load, check and analyse the spec files under a folder or file (or several):
    what ``roofgen check`` does. Raises :class:`roofgen.SpecError` with every error."""
    result = check(
        _paths(path_or_paths),
        thresholds=thresholds,
        rules_file=Path(rules_file) if rules_file is not None else None,
    )
    if result.failed():
        raise SpecError([p for p in result.problems if p.severity is Severity.ERROR])
    return Workspace(result)


def from_dicts(
    cases: Sequence[Mapping[str, Any]] = (), machines: Sequence[Mapping[str, Any]] = ()
) -> Workspace:
    """A workspace built from plain mappings (a case file's and a machine file's
    content), checked by the same schemas and cross-checks as files. Cases may name
    library machines. The mappings are written as YAML to a temporary folder, which
    is removed before this returns."""
    with tempfile.TemporaryDirectory(prefix="roofgen-") as tmp:
        root = Path(tmp)
        for kind, items in (("machines", machines), ("cases", cases)):
            for i, item in enumerate(items):
                name = str(item.get("id", i)) if isinstance(item, Mapping) else str(i)
                target = root / kind / f"{_safe(name)}-{i}.yaml"
                write_file(target, _yaml_text(_plain(item)), root=root)
        result = check([root], display_root=root)
        if result.failed():
            raise SpecError([p for p in result.problems if p.severity is Severity.ERROR])
        return Workspace(result)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in name)[:60] or "spec"


def machine(
    machine_id: str, version: int | None = None, workspace: Workspace | None = None
) -> Machine:
    """A machine by id: the workspace's, else roofgen's library (``version``: the
    latest when None). Raises KeyError when there is none."""
    if workspace is not None and machine_id in workspace.machines:
        found = workspace.machines[machine_id]
        if version is None or found.version == version:
            return found
    from roofgen.machines import get

    return get(machine_id, version)


def analyse(workspace_or_paths: Workspace | PathLike | Iterable[PathLike]) -> Results:
    """The analysis of a workspace, or of the specs under paths."""
    if isinstance(workspace_or_paths, Workspace):
        return workspace_or_paths.analysis
    return load(workspace_or_paths).analysis


def chart(workspace: Workspace, selector: str, **kw: Any) -> Any:
    """``roofgen.chart(ws, "CASE/KERNEL[/VARIANT]")``: see :meth:`Workspace.chart`."""
    return workspace.chart(selector, **kw)


def _selector(
    selector: str, kernel: str | None, variant: str | None
) -> tuple[str, str | None, str | None]:
    parts = selector.split("/")
    if len(parts) > 3 or not all(parts) or (len(parts) > 1 and (kernel or variant)):
        raise ValueError(f"{selector!r}: write CASE/KERNEL or CASE/KERNEL/VARIANT")
    if len(parts) == 1:
        return parts[0], kernel, variant
    return parts[0], parts[1], parts[2] if len(parts) == 3 else None


# -- charts that display offline -------------------------------------------------------


#: The MIME type a notebook frontend draws a Vega-Lite spec from (JupyterLab, VS Code,
#: nteract): the spec alone, no script, no bundle.
VEGA_LITE_MIME = "application/vnd.vegalite.v5+json"
#: The PNG is rendered at this many pixels per CSS pixel and shown at the chart's own
#: size, so its labels read as those of the site's static SVGs, sharp on a dense screen.
PNG_SCALE = 2.0


def chart_mimebundle(spec: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What a notebook shows for a chart: the Vega-Lite spec (drawn by the frontend),
    a PNG for viewers that run no JavaScript (GitHub's notebook view, untrusted
    notebooks), and a line of text; never HTML with a script. The PNG needs
    vl-convert (``roofgen[notebook]``); without it the bundle has no PNG."""
    data: dict[str, Any] = {
        VEGA_LITE_MIME: json.loads(json.dumps(spec, allow_nan=False)),
        "text/plain": f"<roofgen chart: {_title(spec)}>",
    }
    metadata: dict[str, Any] = {}
    try:
        from roofgen.charts.render import to_png
    except ImportError:
        return data, metadata
    png = to_png(dict(spec), scale=PNG_SCALE)
    data["image/png"] = png
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    metadata["image/png"] = {
        "width": round(width / PNG_SCALE),
        "height": round(height / PNG_SCALE),
    }
    return data, metadata


class RooflineChart:
    """Mixin for Altair's top-level charts: displays as :func:`chart_mimebundle` says
    (no CDN, no global renderer, no script in the notebook). The spec shown is not
    validated again: roofgen's tests validate its charts, and Altair checks a property
    as it is set."""

    _roofgen_cache_dir: Path | None = None  # accepted for compatibility; nothing is cached
    # Altair's charts have no HTML form; one inherited from elsewhere would carry a script.
    _repr_html_ = None

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return chart_mimebundle(self.to_dict(validate=False))  # type: ignore[attr-defined]


def _title(spec: Mapping[str, Any]) -> str:
    title = spec.get("title", "")
    return str(title.get("text", "") if isinstance(title, Mapping) else title)


_CLASSES: dict[str, Any] = {}
#: Altair's classes of a spec by its top-level key: the chart, and the schema it follows.
_KINDS = {
    "layer": ("LayerChart", "TopLevelLayerSpec"),
    "vconcat": ("VConcatChart", "TopLevelVConcatSpec"),
    "hconcat": ("HConcatChart", "TopLevelHConcatSpec"),
    "concat": ("ConcatChart", "TopLevelConcatSpec"),
}


def altair_chart(spec: Mapping[str, Any], *, cache_dir: Path | None = None) -> Any:
    """``spec`` as an Altair object (LayerChart, ConcatChart... or Chart) that
    displays inline through :class:`RooflineChart`.

    A spec as roofgen writes them (layers, or panels of layers) is wrapped as it is,
    unvalidated: its views, their encodings and its selections become Altair objects,
    so that the chart layers and changes as one Altair built from the dict; its marks,
    channels, scales and data stay Vega-Lite dicts, which Altair takes anywhere.
    Altair's ``from_dict`` would resolve every part against the schema (some 900
    validations, half a second a chart) for the same ``to_dict()``; any other spec
    still goes through it, unvalidated."""
    import altair as alt

    kind = next((key for key in _KINDS if key in spec), None)
    base = getattr(alt, _KINDS[kind][0]) if kind is not None else alt.Chart
    cls: Any = _CLASSES.get(base.__name__)
    if cls is None:
        cls = _CLASSES[base.__name__] = type(f"Roofgen{base.__name__}", (RooflineChart, base), {})
    if kind is not None and _layered(spec[kind] if kind != "layer" else [spec]):
        obj = _wrap(alt, cls, getattr(alt, _KINDS[kind][1]), spec, kind)
    else:
        obj = cls.from_dict(dict(spec), validate=False)
    obj.__dict__["_roofgen_cache_dir"] = cache_dir  # not a chart property
    return obj


def _layered(views: Any) -> bool:
    """Whether every view is layers of single views (as roofgen's charts are)."""
    return isinstance(views, list) and all(
        isinstance(view, Mapping)
        and isinstance(view.get("layer"), list)
        and all(isinstance(u, Mapping) and "mark" in u and "layer" not in u for u in view["layer"])
        for view in views
    )


def _wrap(alt: Any, cls: Any, schema: Any, spec: Mapping[str, Any], kind: str) -> Any:
    """``spec`` as an instance of ``cls`` (following ``schema``), its views and
    selections Altair objects."""
    from altair.utils.schemapi import debug_mode

    def unit(view: Mapping[str, Any]) -> Any:
        if "encoding" in view:
            view = {**view, "encoding": alt.Encoding(**view["encoding"])}
        return alt.UnitSpec(**view)

    def layered(view: Mapping[str, Any]) -> dict[str, Any]:
        return {**view, "layer": [unit(u) for u in view["layer"]]}

    with debug_mode(False):  # nothing is validated as it is built
        if kind == "layer":
            kwds = layered(spec)
        else:
            kwds = {**spec, kind: [alt.LayerSpec(**layered(view)) for view in spec[kind]]}
        if "params" in kwds:
            kwds["params"] = [
                alt.TopLevelSelectionParameter(**p) if "select" in p else alt.VariableParameter(**p)
                for p in kwds["params"]
            ]
        obj = cls.__new__(cls)
        schema.__init__(obj, **kwds)
    return obj


# -- YAML written back -----------------------------------------------------------------


def _read_round_trip(path: Path) -> Any:
    from roofgen.spec.roundtrip import make_yaml

    return make_yaml().load(path.read_text(encoding="utf-8"))


def _plain(value: Any) -> Any:
    """Plain data: mappings -> dict, sequences -> list, multi-line text as a block."""
    from ruamel.yaml.scalarstring import LiteralScalarString

    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str) and "\n" in value:
        return LiteralScalarString(value)
    return value


def _yaml_text(data: Any) -> str:
    from roofgen.spec.roundtrip import dump, make_yaml

    return dump(make_yaml(), data)


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, (_dt.date, _dt.datetime)) and isinstance(new, str):
        return old.isoformat() == new
    return bool(old == new) and isinstance(old, bool) == isinstance(new, bool)


def _merge(old: Any, new: Any) -> Any:
    """``new`` written into ``old`` (round-trip data), changing only what differs."""
    if isinstance(old, MutableMapping) and isinstance(new, Mapping):
        for key in [k for k in old if k not in new]:
            del old[key]
        for key, value in new.items():
            old[key] = _merge(old[key], value) if key in old else _plain(value)
        return old
    if isinstance(old, list) and isinstance(new, (list, tuple)):
        del old[len(new) :]
        for i, value in enumerate(new):
            if i < len(old):
                old[i] = _merge(old[i], value)
            else:
                old.append(_plain(value))
        return old
    return old if _same(old, new) else _plain(new)


def dump_case(data: Mapping[str, Any], path: PathLike) -> Path:
    """Write a case mapping as YAML that ``roofgen check`` accepts.

    The mapping is checked against the case schema first (raises
    :class:`roofgen.SpecError`). When ``path`` exists, only changed values are
    rewritten: its comments, key order, quoting and flow style stay, and so do its
    line endings, byte order mark and mode. The file must lie inside the project
    (:func:`roofgen.files.write_file`; raises :class:`roofgen.files.WriteRefused`).
    """
    from roofgen.spec import schema
    from roofgen.spec.yamlload import load_text

    target = Path(path)
    if isinstance(data, Case):
        raise TypeError("dump_case takes the case's data (Workspace.case_data), not a Case")
    text = _yaml_text(_plain(data) if not _is_round_trip(data) else data)
    doc, problems = load_text(text, str(target))
    if doc is not None:
        problems = schema.validate(doc, "case")
    if problems:
        raise SpecError(problems)
    if target.exists():  # an edit: laid out as the file was (line endings, BOM, mode)
        from roofgen.spec.roundtrip import lf_text, make_yaml, write_edited

        raw = target.read_bytes()
        existing = make_yaml().load(lf_text(raw))
        write_edited(target, _yaml_text(_merge(existing, copy.deepcopy(data))), raw)
    else:
        write_file(target, text)
    return target


def _is_round_trip(data: Any) -> bool:
    from ruamel.yaml.comments import CommentedBase

    return isinstance(data, CommentedBase)
