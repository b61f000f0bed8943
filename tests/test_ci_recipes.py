"""The Guide's CI page says what `roofgen init --ci` writes: the same files, the same
pinned actions, the default-branch rule of `workflow_run`, and no bare-name install."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from roofgen.cli import main
from roofgen.scaffold.actions import ACTIONS

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "templates" / "guide" / "ci.md"
README = ROOT / "README.md"
INSTALL = "git+https://github.com/example/roofgen@" + "0123456789" * 4


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_page_names_every_file_init_writes(tmp_path, capsys):
    for ci in ("github", "gitlab"):
        folder = tmp_path / ci
        assert main(["init", str(folder), "-q", "--ci", ci, "--install", INSTALL]) == 0
        for path in [*folder.glob(".github/**/*.yml"), *folder.glob(".gitlab-ci.yml"),
                     folder / "roofgen-constraints.txt"]:  # fmt: skip
            assert f"`{path.relative_to(folder)}`" in page(), path
    capsys.readouterr()


def test_the_page_lists_every_pinned_action_as_init_pins_it():
    rows = re.findall(r"^\| (actions/[\w-]+) \| (v[\d.]+) \| `([0-9a-f]{40})` \|$", page(), re.M)
    assert sorted(rows) == sorted((a.repo, a.tag, a.commit) for a in ACTIONS.values())


def test_the_page_says_when_workflow_run_fires():
    text = " ".join(page().split())
    assert "`workflow_run` fires only for workflow files on the default branch" in text
    assert "The pull request that adds `roofgen-comment.yml` gets no comment" in text


@pytest.mark.parametrize("path", [PAGE, README, ROOT / "templates/guide/first-case.md"])
def test_no_page_installs_roofgen_by_its_bare_name(path):
    """Every command block: roofgen from a direct reference (the notebook extra's line
    is the notebooks' page's to change), and no extra index."""
    blocks = "\n".join(re.findall(r"```\w*\n(.*?)```", path.read_text(encoding="utf-8"), re.S))
    lines = re.findall(r"pip install[^\n]*", blocks)
    assert lines or path == PAGE  # the CI page installs through init
    for line in lines:
        if "roofgen" in line and "-c constraints.txt" not in line:
            assert " @ " in line or "roofgen[notebook]" in line, line
    assert "index-url" not in blocks


def test_no_recipe_uses_pull_request_target():
    assert "pull_request_target:" not in page()


def test_the_readme_tells_a_team_how_to_install_roofgen():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Use roofgen in your team's repository") :]
    section = section[: section.index("\n## ", 5)]
    assert "roofgen init --ci github --install" in section
    assert "roofgen-constraints.txt" in section
    assert "workflow_run" in section and "default branch" in section
