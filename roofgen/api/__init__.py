"""The library's entry points: check, analyse, charts, explain, build. The CLI calls
only these; the notebook API (:mod:`roofgen.api.workspace`) builds on them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from roofgen.files import write_file
from roofgen.pipeline import CheckResult, check, check_each
from roofgen.spec import schema

if TYPE_CHECKING:
    from roofgen.config import Settings
    from roofgen.report.analysis import CaseSpool
    from roofgen.report.explain import Explanation
    from roofgen.review.compare import Comparison
    from roofgen.site.build import BuildResult, ProgressFn

__all__ = ["CheckResult", "check", "check_each"]


# -- The rest of the CLI's entry points (the CLI imports only this module) -----------


def analysis_document(result: CheckResult) -> dict[str, Any]:
    """`roofgen analyze --format json`: the versioned analysis JSON."""
    from roofgen.report.analysis import analysis_json

    assert result.analysis is not None
    return analysis_json(result.analysis, result.problems, result.advice)


def analysis_json_chunks(result: CheckResult, indent: int | None = None) -> Iterator[str]:
    """`roofgen analyze --format json`: the analysis JSON as strict text in chunks, one
    case's object made and encoded at a time (compact, or indented by ``indent``
    spaces); joined, byte for byte the encoding of :func:`analysis_document`."""
    from roofgen.report.analysis import analysis_fields
    from roofgen.report.jsontext import stream

    assert result.analysis is not None
    return stream(analysis_fields(result.analysis, result.problems, result.advice), indent)


def analysis_json_spool(indent: int | None = None) -> CaseSpool:
    """`roofgen analyze --format json` one case at a time: hand its ``add`` to
    :func:`check_each`, then write ``chunks(result.analysis, result.problems)`` if the
    check passed; byte for byte the text of :func:`analysis_json_chunks` of
    :func:`check`'s result, without every case's results held at once."""
    from roofgen.report.analysis import CaseSpool

    return CaseSpool(indent)


def json_text(doc: Any, indent: int | None = 2) -> str:
    """``doc`` as strict JSON text (a float that is not finite written as null), with
    a final newline."""
    from roofgen.report.jsontext import dumps

    return dumps(doc, indent) + "\n"


def analysis_text(result: CheckResult) -> str:
    """`roofgen analyze`: the analysis as text for a terminal."""
    from roofgen.report.analysis import analysis_text as text

    assert result.analysis is not None
    return text(result.analysis)


def analysis_csv(result: CheckResult) -> str:
    """`roofgen analyze --format csv`: one row per variant and launch, flattened by the
    rule of :mod:`roofgen.report.tables` (the same columns as ``Results.to_dataframe()``)."""
    from roofgen.report.tables import analysis_rows, rows_csv

    return rows_csv(analysis_rows(analysis_document(result)))


def kernel_chart(
    result: CheckResult, case_id: str, kernel: str, variant: str | None = None
) -> dict[str, Any]:
    """The Vega-Lite spec of one kernel's hierarchical roofline (all its variants, or
    one). Raises ValueError naming what exists when the case, kernel or variant does not."""
    from roofgen.charts import hierarchical_chart
    from roofgen.resources import resource_names
    from roofgen.site.charts import kernel_chart_input

    assert result.analysis is not None and result.specs is not None
    case = next((c for c in result.analysis.cases if c.case.id == case_id), None)
    if case is None:
        known = ", ".join(c.case.id for c in result.analysis.cases)
        raise ValueError(f"no case {case_id!r} (cases: {known})")
    machines = result.specs.machines
    names: dict[str, str] = {}
    for v in case.variants:
        names |= resource_names(machines[v.machine])
    return hierarchical_chart(kernel_chart_input(case, machines, kernel, variant, names))


def write_chart(spec: dict[str, Any], target: Path) -> None:
    """Write a chart spec as .svg, .png, .html or .json (by the suffix), atomically and
    inside the project (:func:`roofgen.files.write_file`; raises WriteRefused)."""
    import json

    from roofgen.charts import to_html, to_png, to_svg

    suffix = target.suffix.lower()
    if suffix == ".svg":
        data = to_svg(spec).encode("utf-8")
    elif suffix == ".png":
        data = to_png(spec)
    elif suffix == ".html":
        data = to_html(spec).encode("utf-8")
    else:
        data = (json.dumps(spec, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    write_file(target, data)


def explain_kernel(
    result: CheckResult, case_id: str, kernel: str, variant: str | None = None
) -> Explanation:
    """`roofgen explain`: one kernel's launches explained, with the recommendations the
    check's rules (shipped and the team's) gave them (raises ExplainError)."""
    from roofgen.report.explain import explain

    assert result.analysis is not None and result.specs is not None
    advice = result.advice
    assert advice is not None  # a check with an analysis has its rules
    return explain(result.analysis, result.specs, advice, case_id, kernel, variant)


def diff(
    base: str,
    head: str,
    settings: Settings,
    *,
    threshold_pct: float | None = None,
    fail_pct: float | None = None,
    allow_removed: frozenset[str] = frozenset(),
    allow_noise: frozenset[str] = frozenset(),
    allow_context: frozenset[str] = frozenset(),
    charts: Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Comparison:
    """`roofgen diff BASE HEAD`: two sets of specs (folders or ``git:REV``) checked under
    the base's policy and compared, with the gate's reasons and the static charts asked
    for (:func:`roofgen.review.compare.compare`; raises ``SideError``). The comparison
    writes its report in each format (``Comparison.report``)."""
    from roofgen.review.compare import compare
    from roofgen.site.charts import machine_roofs  # the roofs the site draws

    return compare(
        base,
        head,
        settings,
        threshold_pct=threshold_pct,
        fail_pct=fail_pct,
        allow_removed=allow_removed,
        allow_noise=allow_noise,
        allow_context=allow_context,
        charts=charts,
        roofs=machine_roofs,
        progress=progress,
    )


def build_site(
    paths: Sequence[Path],
    settings: Settings,
    output: Path,
    markdown_only: bool = False,
    quiet: bool = False,
    strict: bool = False,
    *,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    clean: bool = False,
    workers: int = 2,
    progress: ProgressFn | None = None,
) -> BuildResult:
    """`roofgen build`: check the specs under ``paths``, then build the site of the
    result into ``output`` (:func:`roofgen.site.build.build_site`).

    Pages draw their charts in the browser. With ``[site] static_charts`` set, static
    SVGs are rendered too, on up to ``workers`` renderer processes (0: in this process),
    started as soon as the check knows that a spec changed (a cache miss), so that they
    are warm when the charts are known; otherwise no renderer is started. The caches are
    the project's folder in the user's cache, or ``cache_dir`` unless git tracks files in
    it (see :mod:`roofgen.site.cachedir`); none with ``use_cache=False``. A build whose
    inputs are those of the last build into ``output`` keeps its site without a check
    (:mod:`roofgen.site.unchanged`); MkDocs runs only when a page changed; ``clean``
    builds everything. Options: see the site build.

    Before anything is read or written, the output is checked as it will be
    (:func:`roofgen.site.output.guard`: never the project, what it holds, or a folder
    roofgen did not write; a configured one inside the project), and staging folders of
    killed builds beside it are removed, by every build, one that keeps its site too.
    """
    import contextlib

    from roofgen.site import build, cachedir, unchanged
    from roofgen.site import output as out
    from roofgen.site.renderers import Renderers

    try:
        target = out.guard(settings, output, paths)
    except out.OutputRefused as exc:
        return build.refused(output, exc, None)
    output = target.path
    out.remove_stale(output)
    cache = cachedir.choose(settings, output, cache_dir, use_cache)
    timings: dict[str, float] = {}
    sources = kept = None
    with build.StepClock(timings)("unchanged"):  # nothing changed: the site as it is
        if cache.folder is not None and not markdown_only:
            sources = _sources(paths, settings, output, strict)
        if sources is not None and not clean:
            kept = unchanged.kept_build(cache.folder, output, sources, settings,
                                        quiet=quiet, strict=strict)  # fmt: skip
    if kept is not None:
        kept.notes[:0] = cache.notes
        kept.timings.update(timings)
        return kept
    if progress is not None:
        progress("checking specs", 0, 0)
    renderers = None
    if settings.site.get("static_charts"):
        from roofgen.charts.render import vl_convert_version

        renderers = Renderers(workers, vl_convert_version())
    with renderers or contextlib.nullcontext():
        with build.StepClock(timings)("check"):
            # the pages of unchanged cases: the check neither builds nor analyses those
            reuse = build.open_reuse(settings, cache.folder, clean=clean)
            checked = check(
                paths,
                thresholds=settings.thresholds,
                rules_file=settings.rules,
                display_root=settings.root,
                cache_dir=cache.folder,
                # something changed: charts will likely be rendered
                on_miss=renderers.warm if renderers is not None else None,
                reuse=reuse.known if reuse.cache is not None else None,
            )
        return build.build_site(
            checked, settings, output, markdown_only, quiet, strict, cache=cache, clean=clean,
            renderers=renderers, progress=progress, timings=timings, sources=sources,
            reuse=reuse, target=target,
        )  # fmt: skip


def _sources(paths: Sequence[Path], settings: Settings, output: Path, strict: bool) -> str | None:
    """The digest of a build's inputs (:mod:`roofgen.site.unchanged`), None where a
    team file cannot be read: the build runs and reports it."""
    from roofgen.site.errors import BuildError
    from roofgen.site.unchanged import sources_digest

    try:
        return sources_digest(paths, settings, output, strict=strict)
    except (OSError, BuildError):
        return None


def project_cache(settings: Settings) -> Path | None:
    """The project's cache folder (:func:`roofgen.site.cachedir.choose`: the user's
    cache, owner-only, never in the repository), None where it cannot be used."""
    from roofgen.site import cachedir

    return cachedir.choose(settings, Path(settings.output).absolute(), None, True).folder


def schema_names() -> tuple[str, ...]:
    return tuple(schema.ALL_SCHEMAS)


def schema_document(name: str) -> dict[str, Any]:
    """`roofgen schema NAME`: one of the JSON Schemas."""
    return schema.load_schema(name)


def serve(paths: Sequence[Path], settings: Settings, output: Path, **options: Any) -> Any:
    """`roofgen serve`: :func:`roofgen.site.serve.serve`, building with :func:`build_site`."""
    from roofgen.site.serve import serve as run

    return run(paths, settings, output, build=build_site, **options)


# Names the commands use, imported from here on first use (PEP 562), so that the
# CLI has one way into the library and `import roofgen.api` stays light.
_REEXPORTS = {
    "analyse": "roofgen.analysis.analyse",
    "load_file": "roofgen.spec.yamlload",
    "read_file": "roofgen.spec.yamlload",
    "shipped_rules": "roofgen.pipeline",
    "schema_comment": "roofgen.spec.roundtrip",
    "lf_text": "roofgen.spec.roundtrip",
    "write_edited": "roofgen.spec.roundtrip",
    "ExplainError": "roofgen.report.explain",
    "parse_selector": "roofgen.report.explain",
    "explanation_json": "roofgen.report.explain_json",
    "explanation_text": "roofgen.report.explain_text",
    "discover": "roofgen.spec.load",
    "QuantityError": "roofgen.spec.quantity",
    "parse_quantity": "roofgen.spec.quantity",
    "CURRENT": "roofgen.spec.migrate",
    "MigrationError": "roofgen.spec.migrate",
    "migrate_text": "roofgen.spec.migrate",
    "SideError": "roofgen.review.compare",
    "pending_renames": "roofgen.spec.migrate",
    "read_version": "roofgen.spec.migrate",
}


def __getattr__(name: str) -> Any:
    module = _REEXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'roofgen.api' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module), name)
