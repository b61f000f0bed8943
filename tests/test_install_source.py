"""Where the CI `roofgen init` writes installs roofgen from: a direct reference, never
the bare name (unclaimed on the public index); credentials stripped; a private source
flagged; the dependencies pinned by a constraints file. The slow test installs roofgen
with the written line from a git repository of this tree and runs the written steps."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import workflows
from workflows import (
    ROOT,
    WARNING,
    assert_comment,
    git,
    has_ci_formats,
    run_github_review,
    two_commits,
)

from roofgen.cli import main
from roofgen.scaffold import install
from roofgen.scaffold.install import InstallError, from_direct_url, from_spec

SHA = "89abcdef" * 5


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.mark.parametrize("spec", ["roofgen", "roofgen==0.1.0", "roofgen[site]>=0.1", "Roofgen",
                                  " roofgen ~= 0.1"])  # fmt: skip
def test_a_bare_name_is_refused(spec):
    with pytest.raises(InstallError, match="bare package name: roofgen is not on the public"):
        from_spec(spec)


def test_init_refuses_a_bare_name_and_writes_nothing(tmp_path, capsys):
    project = tmp_path / "p"
    assert main(["init", str(project), "--install", "roofgen==0.1.0"]) == 1
    err = capsys.readouterr().err
    assert "--install: 'roofgen==0.1.0' is a bare package name" in err
    assert "Traceback" not in err
    assert not project.exists()


@pytest.mark.parametrize("spec, url", [
    (f"git+https://github.com/team/roofgen@{SHA}", f"git+https://github.com/team/roofgen@{SHA}"),
    (f"roofgen @ git+https://github.com/team/roofgen@{SHA}",
     f"git+https://github.com/team/roofgen@{SHA}"),
    (f"roofgen[site] @ git+https://github.com/team/roofgen.git@{SHA}",
     f"git+https://github.com/team/roofgen.git@{SHA}"),
])  # fmt: skip
def test_a_pinned_public_source_is_taken_as_it_is(spec, url):
    source = from_spec(spec)
    assert source.url == url and source.notes == () and not source.private
    assert source.requirement(("site",)) == f"roofgen[site] @ {url}"
    line = f"python -m pip install -c roofgen-constraints.txt 'roofgen @ {url}'"
    assert source.pip_line() == line


def test_another_package_is_refused():
    with pytest.raises(InstallError, match="installs 'roofgenn', not roofgen"):
        from_spec(f"roofgenn @ git+https://github.com/team/roofgen@{SHA}")


@pytest.mark.parametrize("userinfo", ["ghp_abc123@", "x-access-token:ghs_abc@", "me:pw@"])
def test_credentials_are_stripped_and_flagged(userinfo):
    source = from_spec(f"git+https://{userinfo}github.com/team/roofgen@{SHA}")
    assert source.url == f"git+https://github.com/team/roofgen@{SHA}"
    assert "removed the credentials from the URL" in source.notes[0]
    assert source.private


def test_ssh_keeps_its_user_and_is_private():
    source = from_spec(f"git+ssh://git@git.example.com/tools/roofgen@{SHA}")
    assert source.url == f"git+ssh://git@git.example.com/tools/roofgen@{SHA}"
    assert source.private and "forks get no secrets" in source.notes[-1]


def test_an_internal_host_is_private_and_a_moving_ref_noted():
    source = from_spec("git+https://git.corp.example/tools/roofgen@main")
    assert source.private
    assert any("not pinned to a commit" in n for n in source.notes)


def test_a_wheel_address_wants_its_digest():
    wheel = (
        "https://github.com/team/roofgen/releases/download/v0.1.0/roofgen-0.1.0-py3-none-any.whl"
    )
    assert any("#sha256=" in n for n in from_spec(wheel).notes)
    assert from_spec(wheel + "#sha256=" + "ab" * 32).notes == ()


@pytest.mark.parametrize("spec", ["git+https://github.com/team/roofgen@$(id)",
                                  "git+https://github.com/t/roofgen@x'y", "ftp://x/roofgen.whl",
                                  "git+https://github.com/t/r@${{ github.token }}"])  # fmt: skip
def test_what_a_workflow_must_not_carry_is_refused(spec):
    with pytest.raises(InstallError):
        from_spec(spec)


def test_pep_610_records():
    info = {"vcs": "git", "commit_id": SHA, "requested_revision": "v0.1.0"}
    vcs = {"url": "https://tok@github.com/team/roofgen.git", "vcs_info": info}
    source = from_direct_url(vcs)
    assert source.url == f"git+https://github.com/team/roofgen.git@{SHA}"
    assert source.origin == "the installed roofgen (direct_url.json)"
    archive = {"url": "https://files.example.com/roofgen-0.1.0-py3-none-any.whl",
               "archive_info": {"hashes": {"sha256": "cd" * 32}}}  # fmt: skip
    assert from_direct_url(archive).url.endswith(".whl#sha256=" + "cd" * 32)
    with pytest.raises(InstallError, match="local folder"):
        from_direct_url({"url": "file:///src/roofgen", "dir_info": {"editable": True}})
    with pytest.raises(InstallError, match="local file"):
        from_direct_url({"url": "file:///tmp/roofgen.whl", "archive_info": {}})


class _Installed:
    """The installed roofgen distribution with another direct_url.json."""

    def __init__(self, real: Any, record: dict[str, Any] | None, requires: list[str]):
        self._real = real
        self._record = record
        self.metadata, self.version, self.requires = (
            self._real.metadata, self._real.version, [*self._real.requires, *requires],
        )  # fmt: skip

    def read_text(self, name: str) -> str | None:
        if name == "direct_url.json":
            return None if self._record is None else json.dumps(self._record)
        return self._real.read_text(name)


def _fake(monkeypatch: pytest.MonkeyPatch, record: dict[str, Any] | None,
          requires: tuple[str, ...] = ()) -> None:  # fmt: skip
    real = metadata.distribution
    roofgen = _Installed(real("roofgen"), record, list(requires))

    def distribution(name: str) -> Any:
        return roofgen if name == "roofgen" else real(name)

    monkeypatch.setattr(install.metadata, "distribution", distribution)


def test_init_proposes_the_source_this_roofgen_came_from(tmp_path, capsys, monkeypatch):
    _fake(monkeypatch, {"url": "https://github.com/team/roofgen",
                        "vcs_info": {"vcs": "git", "commit_id": SHA}})  # fmt: skip
    assert main(["init", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    url = f"git+https://github.com/team/roofgen@{SHA}"
    assert f"CI installs roofgen from {url} (the installed roofgen (direct_url.json))" in err
    assert f"'roofgen @ {url}'" in (tmp_path / ".github/workflows/roofgen.yml").read_text("utf-8")


@pytest.mark.parametrize("record, why", [
    ({"url": "file:///src/roofgen", "dir_info": {}}, "installed from a local folder"),
    (None, "installed from a package index"),
])  # fmt: skip
def test_init_without_a_known_source_leaves_the_ci_out(record, why, tmp_path, capsys,
                                                       monkeypatch):  # fmt: skip
    _fake(monkeypatch, record)
    assert main(["init", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert not (tmp_path / ".github").exists()
    assert not (tmp_path / "roofgen-constraints.txt").exists()
    assert (tmp_path / "roofgen.toml").is_file()
    line = next(x for x in err.splitlines() if ".github/workflows/roofgen.yml" in x)
    assert line.strip().startswith("skipped  .github/workflows/roofgen.yml: this roofgen was")
    assert why in line and "roofgen init --install 'git+https://HOST/ORG/roofgen@COMMIT'" in line


def test_the_constraints_pin_what_is_installed_now():
    text = install.constraints_text()
    pins = dict(line.split("==") for line in text.splitlines() if not line.startswith("#"))
    assert "roofgen" not in {n.lower() for n in pins}
    for name in ("PyYAML", "jsonschema", "Pint", "click", "referencing", "rpds-py"):
        assert pins[name] == metadata.version(name), name
    for name, version in pins.items():
        assert metadata.version(name) == version
    assert "pytest" not in pins and "hypothesis" not in pins  # not roofgen's dependencies
    if "vl-convert-python" in {d.metadata["Name"] for d in metadata.distributions()}:
        assert pins["vl-convert-python"] == metadata.version("vl-convert-python")
    assert list(pins) == sorted(pins, key=lambda n: re.sub(r"[-_.]+", "-", n).lower())


def test_a_dependency_not_installed_here_is_said_to_be_unpinned(tmp_path, capsys, monkeypatch):
    _fake(monkeypatch, {"url": "https://github.com/team/roofgen",
                        "vcs_info": {"vcs": "git", "commit_id": SHA}},
          ('absent-dependency-of-roofgen>=1; extra == "site"',
           'absent-for-another-extra; extra == "other"'))  # fmt: skip
    assert main(["init", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert (
        "created  roofgen-constraints.txt: does not pin absent-dependency-of-roofgen (not "
        "installed here): install roofgen[site] and run init --force to pin them"
    ) in err
    text = (tmp_path / "roofgen-constraints.txt").read_text("utf-8")
    assert "# Not installed here, so not pinned: absent-dependency-of-roofgen.\n" in text


# --------------------------------------------------------------------------- the real install


def _roofgen_repository(dest: Path) -> str:
    """This tree (tracked and untracked files git does not ignore) committed into a new
    git repository; returns the commit."""
    listed = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True, text=True)  # fmt: skip
    files = listed.stdout.split("\0")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "roofgen")
    return git(dest, "rev-parse", "HEAD")


@pytest.mark.slow  # builds roofgen and installs it with its site extra into a new venv
@pytest.mark.timeout(1200)
def test_the_written_install_line_installs_roofgen_and_the_steps_run(tmp_path):
    source = tmp_path / "roofgen-src"
    commit = _roofgen_repository(source)
    url = f"git+file://{source}@{commit}"
    repo = tmp_path / "repo"
    base, head = two_commits(repo, ["--ci", "github", "--install", url])
    venv = tmp_path / "venv"
    # A current pip, as CI's setup-python has: pip 23's URL parser refuses git+file:///.
    subprocess.run([sys.executable, "-m", "venv", "--upgrade-deps", str(venv)], check=True,
                   capture_output=True)  # fmt: skip
    bin_dir = venv / "bin"
    path = f"{bin_dir}:/usr/bin:/bin"
    keep = {k: v for k, v in os.environ.items() if k.startswith(("PIP_", "HOME", "LANG"))}
    env = {**keep, "PATH": path, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    installs = [s for s in workflows.github_steps(repo) if "pip install" in s.script]
    assert {s.job for s in installs} == {"check", "site", "report"}
    pr_install = next(s for s in installs if s.job == "report")
    assert pr_install.script.strip() == (
        f"python -m pip install -c roofgen-constraints.txt 'roofgen[site] @ {url}'"
    )
    result = workflows.run_github_step(pr_install, repo, {}, env)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # What was installed: this commit, and every dependency at its constrained version.
    record = json.loads(next((venv / "lib").glob("python3*/site-packages/roofgen-*.dist-info"))
                        .joinpath("direct_url.json").read_text("utf-8"))  # fmt: skip
    assert record["vcs_info"]["commit_id"] == commit
    frozen = subprocess.run([str(bin_dir / "python"), "-m", "pip", "freeze"], env=env,
                            check=True, capture_output=True, text=True).stdout  # fmt: skip
    pairs = (line.partition("==") for line in frozen.splitlines() if "==" in line)
    installed = {re.sub(r"[-_.]+", "-", k).lower(): v for k, _, v in pairs}
    pins = (repo / "roofgen-constraints.txt").read_text("utf-8")
    for name, _, version in (line.partition("==") for line in pins.splitlines() if "==" in line):
        key = re.sub(r"[-_.]+", "-", name).lower()
        assert installed.get(key, version) == version, name
    assert "vl-convert-python" in installed
    # The steps, with the installed roofgen.
    ci_formats = has_ci_formats()
    summaries = run_github_review(repo, base, head, bin_dir, ci_formats)
    body = assert_comment(repo, head)
    if ci_formats:  # annotations, and the job summaries (of `check` and of `diff`)
        assert WARNING.search(summaries["check output"]), summaries["check output"]
        assert body.split("\n")[1].strip() in summaries["report"]
    build = next(s for s in workflows.github_steps(repo) if "roofgen build" in s.script)
    result = workflows.run_github_step(build, repo, {}, {**env, "CI": "true"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert (repo / "_site" / "index.html").is_file()
    # That roofgen proposes its own source to a new repository.
    other = tmp_path / "other"
    result = subprocess.run([str(bin_dir / "roofgen"), "init", str(other)], env=env,
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"CI installs roofgen from {url} (the installed roofgen" in result.stderr
