"""What `roofgen check` (the pre-commit hook's verb) imports: it reports problems only,
so it loads neither the recommendation rules nor their engine, unless a team's rules
file has recommendations to check against the shipped ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

MINIMAL = Path(__file__).parent / "cases" / "valid" / "minimal"
ROOT = Path(__file__).resolve().parents[1]
PROBE = (
    "import sys\n"
    "from roofgen.cli import main\n"
    "status = main(['check', '-q', 'specs'])\n"
    "print(status, sorted(m for m in sys.modules if m.startswith('roofgen.advice')))\n"
)


def _run(folder: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(folder / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=folder, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_check_imports_no_recommendation_engine(tmp_path):
    shutil.copytree(MINIMAL, tmp_path / "specs")
    assert _run(tmp_path) == "0 []"


def test_check_with_team_recommendations_still_checks_them(tmp_path):
    shutil.copytree(MINIMAL, tmp_path / "specs")
    (tmp_path / "roofgen.toml").write_text('specs = ["specs"]\nrules = "team.yaml"\n', "utf-8")
    (tmp_path / "team.yaml").write_text(
        "roofgen: 1\nrecommendations:\n  - {id: mine, message: '{kernal} is slow'}\n", "utf-8"
    )
    status, modules = _run(tmp_path).split(" ", 1)
    assert status == "1"  # the unknown placeholder is an error
    assert "roofgen.advice.load" in modules
