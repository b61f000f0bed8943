"""Ruff (format and lint) and mypy run as part of the tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_lint():
    result = _run("ruff", "check", "roofgen", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _run("ruff", "format", "--check", "roofgen", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # ~20 s
def test_mypy():
    result = _run("mypy", "roofgen")
    assert result.returncode == 0, result.stdout + result.stderr
