"""Static chart SVGs only where asked for: a default build draws its charts in the
browser (no SVG rendered, no renderer started, a <noscript> note instead of the image
and the link); ``[site] static_charts`` / ``--static-charts`` renders them as before.
A build imports no Altair."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from roofgen.api import build_site
from roofgen.cli import main
from roofgen.config import load_settings
from roofgen.site.build import NOSCRIPT_NOTE

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"


def _pages(docs: Path) -> dict[str, str]:
    return {p.relative_to(docs).as_posix(): p.read_text("utf-8") for p in docs.rglob("*.md")}


def test_a_default_build_renders_no_svg(tmp_path: Path, make_settings: Any) -> None:
    settings = make_settings(tmp_path, specs=[MINIMAL])
    docs = tmp_path / "docs"
    result = build_site([MINIMAL], settings, docs, markdown_only=True, cache_dir=tmp_path / "c")
    assert result.ok, [p.format() for p in result.problems]
    assert result.charts > 0
    assert (result.chart_stats.svgs_rendered, result.chart_stats.svgs_cached) == (0, 0)
    assert result.chart_stats.specs_built == result.charts
    assert not list(docs.rglob("*.svg")) and not (docs / "assets" / "charts").exists()
    assert not list((tmp_path / "c").rglob("svg-*"))
    pages = "".join(_pages(docs).values())
    assert pages.count('class="roofgen-chart"') == result.charts
    assert pages.count("<noscript>") == result.charts
    assert "<img" not in pages and "Static SVG" not in pages
    assert pages.count(NOSCRIPT_NOTE) == result.charts


def test_static_charts_setting_renders_svgs(tmp_path: Path, make_settings: Any) -> None:
    settings = make_settings(tmp_path, specs=[MINIMAL], static_charts=True)
    docs = tmp_path / "docs"
    result = build_site(
        [MINIMAL], settings, docs, markdown_only=True, cache_dir=tmp_path / "c", workers=0
    )
    assert result.ok, [p.format() for p in result.problems]
    assert result.chart_stats.svgs_rendered == result.charts > 0
    svgs = list((docs / "assets" / "charts").glob("*.svg"))
    assert len(svgs) == result.charts
    pages = "".join(_pages(docs).values())
    assert pages.count("[Static SVG](") == result.charts
    assert pages.count("<noscript><img ") == result.charts
    assert NOSCRIPT_NOTE not in pages


def test_static_charts_in_the_settings_file_and_on_the_command_line(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    default = load_settings(tmp_path)
    assert default.site["static_charts"] is False
    assert default.origins["site.static_charts"] == "default"
    (tmp_path / "roofgen.toml").write_text("[site]\nstatic_charts = true\n", encoding="utf-8")
    assert load_settings(tmp_path).site["static_charts"] is True
    (tmp_path / "roofgen.toml").write_text('[site]\nstatic_charts = "yes"\n', encoding="utf-8")
    assert main(["config"]) == 1
    (tmp_path / "roofgen.toml").write_text("[site]\nname = 'x'\n", encoding="utf-8")
    args = ["build", "-q", "--markdown-only", "-j", "0", "--cache-dir", "c", str(MINIMAL)]
    assert main([*args, "-o", "plain"]) == 0
    assert not list((tmp_path / "plain").rglob("*.svg"))
    assert main([*args, "--static-charts", "-o", "static"]) == 0
    assert list((tmp_path / "static" / "assets" / "charts").glob("*.svg"))
    (tmp_path / "roofgen.toml").unlink()
    assert load_settings(tmp_path).site["static_charts"] is False  # the flag did not stick


def test_a_build_imports_no_altair(tmp_path: Path) -> None:
    """Altair costs most of a second to import; a site build needs none of it."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from roofgen.cli import main
        status = main(["build", "-q", "-o", "site", "--cache-dir", "c", {str(MINIMAL)!r}])
        print(status, "altair" in sys.modules)
    """)
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout.split() == ["0", "False"], done.stdout + done.stderr
