"""The chart renderer processes: same bytes as rendering in this process, charts of a
lost renderer rendered here, a rejected spec reported, and a build from a script
without an ``if __name__ == "__main__"`` guard."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from roofgen.charts.render import vl_convert_version
from roofgen.site.charts import Chart, ChartStore, chart_digest
from roofgen.site.renderers import RendererError, Renderers

pytestmark = pytest.mark.slow

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def charts(count: int) -> list[Chart]:
    out = []
    for n in range(count):
        spec = {
            "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
            "title": f"chart {n}",
            "data": {"values": [{"x": i, "y": i * (n + 1)} for i in range(1, 6)]},
            "mark": {"type": "line", "clip": True},
            "encoding": {
                "x": {"field": "x", "type": "quantitative", "scale": {"type": "log"}},
                "y": {"field": "y", "type": "quantitative", "scale": {"type": "log"}},
            },
        }
        out.append(Chart(spec, chart_digest(spec)))
    return out


def test_renderer_processes_give_the_bytes_of_this_process() -> None:
    wanted = charts(6)
    here = ChartStore(None).svgs(wanted)
    with Renderers(2, vl_convert_version()) as renderers:
        there = ChartStore(None, renderers).svgs(wanted)
        assert len(renderers._procs) == 2  # six charts: a second renderer started
    assert there == here
    assert all(isinstance(svg, str) and svg.startswith("<svg") for svg in there.values())


def test_charts_of_a_lost_renderer_are_rendered_here() -> None:
    wanted = charts(2)
    with Renderers(1, vl_convert_version()) as renderers:
        for renderer in renderers._procs:
            renderer.proc.kill()
            renderer.proc.wait()
        # The dead renderer is dropped and one started in its place; kill that too,
        # as it says it is warm, so that the charts come back to this process.
        original = renderers._start

        def start_and_lose() -> bool:
            started = original()
            renderers._procs[-1].proc.kill()
            return started

        renderers._start = start_and_lose  # type: ignore[method-assign]
        got = ChartStore(None, renderers).svgs(wanted)
    assert got == ChartStore(None).svgs(wanted)


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ({"mark": "nonsense"}, "conversion failed"),
        # Renderers are offline too: a chart cannot fetch its data.
        ({"mark": "point", "data": {"url": "http://example.com/x.csv"}}, "url not allowed"),
    ],
)
def test_a_spec_vl_convert_rejects_is_an_error_not_a_lost_chart(spec, reason) -> None:
    error = f"(?s)cannot render chart bad: .*{reason}"
    with Renderers(1, vl_convert_version()) as renderers, pytest.raises(RendererError, match=error):
        list(renderers.render({"bad": spec}))


def test_no_renderers_renders_in_this_process() -> None:
    with Renderers(0, vl_convert_version()) as renderers:
        assert renderers._procs == []
        assert list(renderers.render({})) == []


def test_a_build_from_a_script_without_a_main_guard(tmp_path: Path) -> None:
    """Renderers never re-import the caller's script (multiprocessing's spawn would,
    and would run the build again in every worker)."""
    script = tmp_path / "build_it.py"
    script.write_text(
        textwrap.dedent(f"""
            from pathlib import Path
            from roofgen.analysis.bounds import Thresholds
            from roofgen.config import Settings
            from roofgen.api import build_site

            root = Path({str(tmp_path)!r})
            settings = Settings(root=root, file=None, specs=(Path({str(MINIMAL)!r}),),
                                output=root / "site", rules=None, thresholds=Thresholds(),
                                site={{"name": "Script", "url": "https://perf.example.com/",
                                      "static_charts": True}})
            result = build_site(list(settings.specs), settings, root / "site", quiet=True,
                                cache_dir=root / "cache")
            print("BUILT", result.ok, result.chart_stats.svgs_rendered)
        """),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("BUILT") == 1, done.stdout
    built, ok, rendered = done.stdout.split()
    assert ok == "True" and int(rendered) > 0
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_build_with_nothing_changed_starts_no_renderer(
    tmp_path: Path, monkeypatch, make_settings
) -> None:
    from roofgen.api import build_site

    settings = make_settings(tmp_path, name="Warm", specs=[MINIMAL], static_charts=True)
    first = build_site([MINIMAL], settings, tmp_path / "site", cache_dir=tmp_path / "c")
    assert first.ok and first.chart_stats.svgs_rendered > 0
    started: list[int] = []
    real = Renderers._start

    def counting(self: Renderers) -> bool:
        started.append(1)
        return real(self)

    monkeypatch.setattr(Renderers, "_start", counting)
    again = build_site([MINIMAL], settings, tmp_path / "site", cache_dir=tmp_path / "c")
    assert again.ok and again.chart_stats.svgs_rendered == 0
    assert started == []


def test_a_build_without_static_charts_starts_no_renderer(
    tmp_path: Path, monkeypatch, make_settings
) -> None:
    from roofgen.api import build_site

    def refuse(self: Renderers) -> bool:
        raise AssertionError("a renderer was started")

    monkeypatch.setattr(Renderers, "_start", refuse)
    settings = make_settings(tmp_path, name="Browser only", specs=[MINIMAL])
    result = build_site([MINIMAL], settings, tmp_path / "site", cache_dir=tmp_path / "c")
    assert result.ok and result.charts > 0
    assert (result.chart_stats.svgs_rendered, result.chart_stats.svgs_cached) == (0, 0)
    assert not list((tmp_path / "site").rglob("*.svg"))
    assert not list((tmp_path / "c").rglob("svg-*"))


def test_build_jobs_sets_the_renderer_processes(tmp_path: Path, monkeypatch, capsys) -> None:
    from roofgen.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    started: list[int] = []
    real = Renderers._start

    def counting(self: Renderers) -> bool:
        started.append(self.count)
        return real(self)

    monkeypatch.setattr(Renderers, "_start", counting)
    out = tmp_path / "out"
    static = ["build", "-q", "--static-charts"]
    assert main([*static, "-j", "0", "-o", str(out), str(MINIMAL)]) == 0
    assert (out / "index.html").is_file()
    assert started == []  # rendered in roofgen's own process
    assert main([*static, "-j", "1", "--no-cache", "-o", str(out), str(MINIMAL)]) == 0
    assert started == [1]
    capsys.readouterr()
    assert main(["build", "-j", "-1", str(MINIMAL)]) == 2
    assert "-1 is not in the range x>=0" in capsys.readouterr().err
