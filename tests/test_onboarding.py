"""Onboarding: `roofgen init`, `roofgen new case`, `roofgen explain`, `roofgen migrate`,
the reference anchors in schema messages, and the "Your first case" tutorial run end to end.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from roofgen.cli import main
from roofgen.spec import fields as reference
from roofgen.spec import library
from roofgen.spec.migrate import CURRENT, MIGRATIONS, can_migrate, migrate_text
from roofgen.spec.roundtrip import dump, load_round_trip
from roofgen.spec.schema import ALL_SCHEMAS, load_schema
from roofgen.spec.yamlload import load_file
from roofgen.spec.yamltext import first_sentence

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = ROOT / "templates" / "guide" / "first-case.md"
SGEMM = ROOT / "tests" / "data" / "ncu" / "01_sgemm.csv"
#: Where the tests' CI installs roofgen from (a git URL pinned to a commit).
INSTALL = "git+https://github.com/example/roofgen@" + "0123456789" * 4
A100_KERNELS = ROOT / "tests" / "cases" / "valid" / "a100-kernels"  # vector-add, softmax-fusion


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in err, err
    return status, out, err


# --------------------------------------------------------------------------- init


INIT_FILES = [
    "roofgen.toml",
    "specs/cases/example-vector-add.yaml",
    "specs/machines/README.md",
    ".pre-commit-config.yaml",
    ".github/workflows/roofgen.yml",
    ".github/workflows/roofgen-pr.yml",
    ".github/workflows/roofgen-comment.yml",
    ".github/dependabot.yml",
    "roofgen-constraints.txt",
    ".vscode/settings.json",
    ".gitignore",
    ".gitattributes",
    *[f".roofgen/{kind}.schema.json" for kind in ALL_SCHEMAS],
]


def test_init_in_an_empty_folder_checks_clean(tmp_path, capsys, monkeypatch):
    project = tmp_path / "perf"
    status, out, err = run(["init", str(project), "--install", INSTALL], capsys)
    assert status == 0, err
    assert out == ""  # messages go to stderr
    for name in INIT_FILES:
        assert (project / name).is_file(), name
        assert f"created  {name}" in err
    assert "next:" in err and "roofgen new case" in err
    monkeypatch.chdir(project)
    status, _, err = run(["check", "--strict", "-v"], capsys)
    assert status == 0, err
    assert "0 error(s), 0 warning(s), 0 note(s)" in err
    # The example's editor line points at the schema init wrote.
    example = project / "specs/cases/example-vector-add.yaml"
    first = example.read_text(encoding="utf-8").splitlines()[0]
    schema = first.removeprefix("# yaml-language-server: $schema=")
    assert (example.parent / schema).resolve() == (project / ".roofgen/case.schema.json")
    for kind in ALL_SCHEMAS:
        written = json.loads((project / f".roofgen/{kind}.schema.json").read_text("utf-8"))
        assert written == load_schema(kind)
    # The example pins its library machine.
    doc, problems = load_file(example)
    assert doc is not None and not problems
    assert doc.data["machines"] == [{"id": "a100-40gb-sxm", "version": 2}]


def test_init_pre_commit_and_editor_files(tmp_path, capsys):
    # The CI files init writes: tests/test_init_ci.py.
    assert run(["init", str(tmp_path), "-q", "--ci", "none"], capsys)[0] == 0
    assert not (tmp_path / ".github").exists()
    assert not (tmp_path / "roofgen-constraints.txt").exists()
    hook = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text("utf-8"))
    hook = hook["repos"][0]["hooks"][0]
    assert hook["entry"] == "roofgen check" and hook["pass_filenames"] is False
    for name, matches in [("a.yaml", True), ("b.yml", True), ("roofgen.toml", True),
                          ("x.py", False)]:  # fmt: skip
        assert bool(re.search(hook["files"], name)) is matches
    settings = json.loads((tmp_path / ".vscode/settings.json").read_text("utf-8"))
    assert settings["yaml.schemas"] == {
        "./.roofgen/machine.schema.json": "specs/machines/*.yaml",
        "./.roofgen/case.schema.json": "specs/cases/*.yaml",
    }
    assert "site/" in (tmp_path / ".gitignore").read_text("utf-8").splitlines()
    assert (tmp_path / ".gitattributes").read_text("utf-8") == (
        "# roofgen: spec files keep LF line endings\n*.yaml text eol=lf\n*.yml text eol=lf\n"
    )


def test_this_repository_offers_the_pre_commit_hook():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8"))
    hook = next(h for h in hooks if h["id"] == "roofgen-check")
    assert hook["entry"] == "roofgen check"
    assert hook["pass_filenames"] is False
    assert hook["language"] == "python"
    assert hook["files"] == r"\.(ya?ml|toml)$"


def test_init_in_an_existing_repository_adds_to_its_files(tmp_path, capsys, monkeypatch):
    (tmp_path / ".gitignore").write_text("node_modules/\n*.log", encoding="utf-8")
    (tmp_path / ".gitattributes").write_text("*.png binary\n*.yaml   text  eol=lf\n", "utf-8")
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode/settings.json").write_text(
        json.dumps({"editor.tabSize": 2, "yaml.schemas": {"./other.json": "conf/*.yaml"}},
                   indent=2) + "\n", encoding="utf-8")  # fmt: skip
    pre_commit = (
        "# our hooks\nrepos:\n  - repo: https://github.com/pre-commit/pre-commit-hooks\n"
        "    rev: v4.6.0\n    hooks:\n      - id: trailing-whitespace  # keep\n"
    )
    (tmp_path / ".pre-commit-config.yaml").write_text(pre_commit, encoding="utf-8")
    (tmp_path / "README.md").write_text("# our project\n", encoding="utf-8")
    status, _, err = run(["init", str(tmp_path)], capsys)
    assert status == 0, err
    ignore = (tmp_path / ".gitignore").read_text("utf-8")
    assert ignore.startswith("node_modules/\n*.log\n")
    assert "site/" in ignore.splitlines() and ".roofgen-cache/" in ignore.splitlines()
    assert (tmp_path / ".gitattributes").read_text("utf-8") == (  # *.yaml was there already
        "*.png binary\n*.yaml   text  eol=lf\n\n"
        "# roofgen: spec files keep LF line endings\n*.yml text eol=lf\n"
    )
    assert "updated  .gitattributes: sets *.yml text eol=lf" in err
    settings = json.loads((tmp_path / ".vscode/settings.json").read_text("utf-8"))
    assert settings["editor.tabSize"] == 2
    assert settings["yaml.schemas"]["./other.json"] == "conf/*.yaml"
    assert settings["yaml.schemas"]["./.roofgen/case.schema.json"] == "specs/cases/*.yaml"
    merged = (tmp_path / ".pre-commit-config.yaml").read_text("utf-8")
    assert merged.startswith(pre_commit)  # every line kept, comments included
    hooks = [h["id"] for r in yaml.safe_load(merged)["repos"] for h in r["hooks"]]
    assert hooks == ["trailing-whitespace", "roofgen-check"]
    assert (tmp_path / "README.md").read_text("utf-8") == "# our project\n"
    assert "updated  .gitignore" in err and "updated  .vscode/settings.json" in err
    # Again: everything is there, nothing changes.
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    status, _, err = run(["init", str(tmp_path)], capsys)
    assert status == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert "created" not in err and "updated" not in err
    monkeypatch.chdir(tmp_path)
    assert run(["check", "--strict"], capsys)[0] == 0


def test_init_never_overwrites_without_force(tmp_path, capsys):
    (tmp_path / "specs/cases").mkdir(parents=True)
    mine = tmp_path / "specs/cases/example-vector-add.yaml"
    mine.write_text("# mine\n", encoding="utf-8")
    workflow = tmp_path / ".github/workflows/roofgen.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: ours\n", encoding="utf-8")
    status, _, err = run(["init", str(tmp_path), "--install", INSTALL], capsys)
    assert status == 0
    assert mine.read_text("utf-8") == "# mine\n"
    assert workflow.read_text("utf-8") == "name: ours\n"
    assert "skipped  specs/cases/example-vector-add.yaml: exists; --force overwrites it" in err
    assert "skipped 2 file(s) that exist" in err
    status, _, err = run(["init", str(tmp_path), "--force", "--install", INSTALL], capsys)
    assert status == 0
    assert "overwritten  .github/workflows/roofgen.yml" in err
    assert "overwritten  specs/cases/example-vector-add.yaml" in err
    assert mine.read_text("utf-8").startswith("# yaml-language-server:")


def test_init_follows_the_settings_it_finds(tmp_path, capsys, monkeypatch):
    (tmp_path / "roofgen.toml").write_text('specs = ["perf"]\noutput = "public"\n', "utf-8")
    assert run(["init", str(tmp_path), "--machine", "h100-sxm"], capsys)[0] == 0
    assert (tmp_path / "roofgen.toml").read_text("utf-8") == 'specs = ["perf"]\noutput = "public"\n'
    assert (tmp_path / "perf/cases/example-vector-add.yaml").is_file()
    settings = json.loads((tmp_path / ".vscode/settings.json").read_text("utf-8"))
    assert settings["yaml.schemas"]["./.roofgen/case.schema.json"] == "perf/cases/*.yaml"
    assert "public/" in (tmp_path / ".gitignore").read_text("utf-8").splitlines()
    monkeypatch.chdir(tmp_path)
    assert run(["check", "--strict"], capsys)[0] == 0


def test_init_leaves_a_settings_json_with_comments_alone(tmp_path, capsys):
    settings = tmp_path / ".vscode/settings.json"
    settings.parent.mkdir()
    text = '{\n  // ours\n  "editor.tabSize": 2,\n}\n'
    settings.write_text(text, encoding="utf-8")
    status, _, err = run(["init", str(tmp_path)], capsys)
    assert status == 0
    assert settings.read_text("utf-8") == text
    assert "skipped  .vscode/settings.json: not plain JSON" in err
    assert '"./.roofgen/case.schema.json": "specs/cases/*.yaml"' in err  # what to add by hand


@pytest.mark.parametrize("machine", library.ids())
def test_init_example_checks_clean_on_every_library_machine(machine, tmp_path, capsys,
                                                            monkeypatch):  # fmt: skip
    assert run(["init", str(tmp_path), "--machine", machine, "-q"], capsys)[0] == 0
    monkeypatch.chdir(tmp_path)
    assert run(["check", "--strict"], capsys)[0] == 0


# --------------------------------------------------------------------------- new case


@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch) -> Path:  # fmt: skip
    assert run(["init", str(tmp_path), "-q"], capsys)[0] == 0
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: What `check` says of a value `new case` left for a measurement.
PLACEHOLDER = re.compile(
    r"^\S+:\d+:\d+: \S+: 'TODO' is a placeholder: measure .+ and write it here"
)


def _placeholder_errors_only(err: str) -> list[str]:
    """The error lines of `check`, each asserted to be a located placeholder error."""
    lines = [line for line in err.splitlines() if "file(s) checked" not in line]
    assert lines, err
    for line in lines:
        assert PLACEHOLDER.match(line), line
    return lines


def _measured(text: str) -> str:
    """The file with its TODO values filled as a person who measured them would: an
    8192^3 BF16 GEMM in 1.4 ms (H100 SXM: 2 x 8192^3 = 1.1e12 FLOP over 989 TFLOP/s =
    1.11 ms, 79% of it), A and B read once (2 x 2 x 8192^2 B = 268 MB), C written once
    (2 x 8192^2 B = 134 MB), the caches more."""
    values = {"median": "1.4 ms", "q1": "1.39 ms", "q3": "1.41 ms", "read": "300 MB",
              "write": "134 MB"}  # fmt: skip
    head, marker, measurement = text.partition("        measurement:\n")
    return (
        head
        + marker
        + re.sub(
            r"^(\s+)([a-z0-9_-]+): TODO$",
            lambda m: f"{m[1]}{m[2]}: {values.get(m[2], '1.5 GB')}",
            measurement,
            flags=re.M,
        )
    )


def test_new_case_has_every_field_and_checks_once_measured(project, capsys):
    status, out, err = run(["new", "case", "my-gemm", "--machine", "h100-sxm", "--kernel",
                            "gemm"], capsys)  # fmt: skip
    assert status == 0, err
    path = project / "specs/cases/my-gemm.yaml"
    assert f"wrote {Path('specs/cases/my-gemm.yaml')}" in err
    text = path.read_text("utf-8")
    assert text.startswith("# yaml-language-server: $schema=../../.roofgen/case.schema.json\n")
    for f in reference.fields("case"):
        if f.key.startswith("<") or f.pattern is not None or f.key == "$schema":
            continue
        assert re.search(rf"^\s*(#\s*)?(- )?{re.escape(f.key)}:", text, re.M), f.display
        if f.description:
            first_words = " ".join(first_sentence(f.description).split()[:3]).rstrip(".,;:")
            assert first_words in " ".join(
                line.strip().lstrip("#").strip() for line in text.splitlines()
            ), f.display
    assert "# TODO" in text
    # Untouched, it fails check: each value to measure, located, says what to measure.
    status, _, err = run(["check", "--strict"], capsys)
    assert status == 1
    lines = _placeholder_errors_only(err)
    median = text.splitlines().index("            median: TODO") + 1
    assert (
        f"{Path('specs/cases/my-gemm.yaml')}:{median}:21: "
        "variants[0].launches[0].measurement.time.median: 'TODO' is a placeholder: measure "
        "the median time of one launch over the timed repeats and write it here (e.g. '1.42 ms')"
    ) in lines
    # It is YAML ruamel.yaml reads and writes back without losing a line.
    _, data = load_round_trip(text)
    doc, problems = load_file(path)
    assert doc is not None and not problems
    assert json.loads(json.dumps(data)) == doc.data
    assert doc.data["machines"] == [{"id": "h100-sxm", "version": 2}]
    assert doc.data["kernels"][0]["id"] == "gemm"
    assert doc.data["variants"][0]["launches"][0]["kernel"] == "gemm"
    # Filled in with what was measured, it checks.
    path.write_text(_measured(text), "utf-8")
    status, _, err = run(["check"], capsys)
    assert status == 0, err


@pytest.mark.parametrize("machine", library.ids())
def test_an_untouched_new_case_fails_check_only_on_its_placeholders(machine, project, capsys):
    status, _, err = run(["new", "case", "x", "--machine", machine, "-o", "specs/cases/x.yaml"],
                         capsys)  # fmt: skip
    assert status == 0, err
    status, _, err = run(["check", "--strict"], capsys)
    assert status == 1
    lines = _placeholder_errors_only(err)
    assert any(".measurement.time.median: 'TODO'" in line for line in lines)


def test_new_case_softmax_writes_a_softmax_template(project, capsys):
    status, _, err = run(["new", "case", "softmax", "--machine", "a100-40gb-sxm"], capsys)
    assert status == 0, err
    doc, problems = load_file(project / "specs/cases/softmax.yaml")
    assert doc is not None and not problems
    kernel = doc.data["kernels"][0]
    assert kernel["operator"] == {"kind": "softmax", "shape": {"rows": 8192, "cols": 8192}}
    assert kernel["dtypes"] == {"x": "bf16", "y": "bf16"}
    flops = doc.data["variants"][0]["launches"][0]["measurement"]["flops"]
    # 8192 x 8192 = 67,108,864 scores; 5 FLOP each (max, subtract, add, two rescaling
    # multiplies) = 3.36e8 FLOP on the FP32 pipe; one exp each = 6.71e7 OP on the SFU.
    assert flops == {"fp32": {"fp32": "3.36e8 FLOP"}, "sfu": {"transcendental": "6.71e7 OP"}}
    assert "tensor" not in flops and "m" not in kernel["operator"]["shape"]
    text = (project / "specs/cases/softmax.yaml").read_text("utf-8")
    assert "    # units: [fp32, sfu]" in text  # offered, commented out


@pytest.mark.parametrize(
    ("ids", "kind"),
    [
        (["softmax"], "softmax"),
        (["my-gemm"], "gemm"),
        (["flash-attn"], "attention"),
        (["fused_rmsnorm"], "rmsnorm"),
        (["batched-gemm-v2"], "batched-gemm"),
        (["bmm"], "batched-gemm"),
        (["softmax-gemm"], None),  # two kinds: ambiguous
        (["x"], None),
        (["kernel-a", "layernorm-study"], "layernorm"),  # the kernel's id names none
    ],
)
def test_the_operator_is_guessed_from_the_ids_only_where_unambiguous(ids, kind):
    from roofgen.scaffold.operators import guess_operator

    assert guess_operator(*ids) == kind


def test_new_case_operator_option_and_its_default(project, capsys):
    status, _, err = run(["new", "case", "x", "--machine", "h100-sxm", "--operator",
                          "attention", "-o", "-"], capsys)  # fmt: skip
    assert status == 0, err
    status, out, err = run(["new", "case", "x", "--machine", "h100-sxm", "--operator",
                            "attention", "-o", "-", "-q"], capsys)  # fmt: skip
    data = yaml.safe_load(out)
    assert data["kernels"][0]["operator"]["kind"] == "attention"
    status, out, err = run(["new", "case", "study", "--machine", "h100-sxm", "-o", "-"], capsys)
    assert yaml.safe_load(out)["kernels"][0]["operator"]["kind"] == "gemm"
    assert "no operator kind in 'study': writing a gemm template" in err
    status, _, err = run(["new", "case", "x", "--machine", "h100-sxm", "--operator", "fft"],
                         capsys)  # fmt: skip
    assert status == 2
    assert "--operator 'fft': no template of that kind; one of: gemm, batched-gemm" in err


def test_new_case_never_overwrites_without_force(project, capsys):
    assert run(["new", "case", "k", "--machine", "a100-40gb-sxm"], capsys)[0] == 0
    path = project / "specs/cases/k.yaml"
    path.write_text("# mine\n", encoding="utf-8")
    status, _, err = run(["new", "case", "k", "--machine", "a100-40gb-sxm"], capsys)
    assert status == 1 and "exists; pass --force to overwrite it" in err
    assert path.read_text("utf-8") == "# mine\n"
    assert run(["new", "case", "k", "--machine", "a100-40gb-sxm", "--force"], capsys)[0] == 0
    assert path.read_text("utf-8").startswith("# yaml-language-server:")


def test_new_case_usage_errors(project, capsys):
    assert run(["new", "case", "Bad Id", "--machine", "a100-40gb-sxm"], capsys)[0] == 2
    status, _, err = run(["new", "case", "k", "--machine", "no-such-gpu"], capsys)
    assert status == 1 and "no machine 'no-such-gpu'" in err
    status, out, _ = run(["new", "case", "k", "--machine", "a100-40gb-sxm", "-o", "-"], capsys)
    assert status == 0 and out.startswith("# yaml-language-server:")
    assert not (project / "specs/cases/k.yaml").exists()


def test_new_case_from_an_ncu_export(project, capsys):
    status, _, err = run(["new", "case", "sgemm", "--machine", "a100-40gb-sxm", "--from-ncu",
                          str(SGEMM)], capsys)  # fmt: skip
    assert status == 0, err
    text = (project / "specs/cases/sgemm.yaml").read_text("utf-8")
    assert "Imported by `roofgen import ncu`" in text and "dram__" in text
    assert run(["check"], capsys)[0] == 0


# --------------------------------------------------------------------------- explain


def test_explain_text(capsys, monkeypatch):
    monkeypatch.chdir(A100_KERNELS)
    status, out, err = run(["explain", "vector-add/add", ".", "-q"], capsys)
    assert status == 0, err
    for words in (
        "vector-add/add/baseline on a100-40gb-sxm",
        "binds      HBM2 (memory.hbm): it needs 2.07 ms of the 2.48 ms measured",
        "84% of the bound against measured roofs, 84% against datasheet roofs",
        "headroom 1.20x",
        "runner-up  L2 cache (memory.l2) needs 457 us, 22% of the binding time: not close",
        "time each resource needs (demand / capacity",
        "HBM2 (memory.hbm)", "3.22 GB", "binds",
        "coverage", "unknown (not zero",
        "what to try",
        "vectorised: 2.33 ms  1.06x vs baseline",
    ):  # fmt: skip
        assert words in out, words
    status, out, _ = run(["explain", "vector-add/add/vectorised", ".", "-q"], capsys)
    assert status == 0
    assert "add/vectorised" in out and "add/baseline" not in out and "vs baseline" not in out


def test_explain_json(capsys, monkeypatch):
    monkeypatch.chdir(A100_KERNELS)
    status, out, _ = run(
        ["explain", "softmax-fusion/softmax", ".", "--format", "json", "-q"], capsys
    )
    assert status == 0
    doc = json.loads(out)
    assert doc["roofgen_output"] == 1 and doc["case"] == "softmax-fusion"
    assert doc["kernel"] == "softmax"
    assert doc["absent_from"]  # the baseline's three kernels are not 'softmax'
    launch = doc["variants"][0]["launches"][0]
    rows = {r["resource"]: r for r in launch["resources"]}
    for resource, seconds in launch["bound_s"].items():
        assert rows[resource]["seconds"] == pytest.approx(seconds)
        assert rows[resource]["known"]
    assert rows[launch["binding"]]["role"] == "binds"
    assert rows[launch["runner_up"]]["role"] == "runner-up"
    for row in launch["resources"]:
        if row["known"] and row["capacity"] and row["demand"]:
            assert row["demand"] / row["capacity"] == pytest.approx(row["seconds"])
        if not row["known"]:
            assert row["note"]
    assert launch["recommendations"]
    assert launch["recommendations_from"] == "roofgen.advice"  # the check's advice, no fallback
    assert launch["efficiency_by_basis"]["measured"] == launch["efficiency"]


def test_explain_all_variants_with_speedups(capsys, monkeypatch):
    monkeypatch.chdir(A100_KERNELS)
    status, out, _ = run(["explain", "vector-add/add", ".", "--format", "json", "-q"], capsys)
    doc = json.loads(out)
    speedups = [v["speedup_vs_first"] for v in doc["variants"]]
    assert speedups[0] == 1.0 and speedups[1] == pytest.approx(2.478 / 2.334)


def test_explain_says_what_exists(capsys, monkeypatch):
    monkeypatch.chdir(A100_KERNELS)
    status, _, err = run(["explain", "vector-add/nope", ".", "-q"], capsys)
    assert status == 1 and "has no kernel 'nope' (kernels: add)" in err
    status, _, err = run(["explain", "nope/add", ".", "-q"], capsys)
    assert status == 1 and "no case 'nope'" in err
    status, _, err = run(["explain", "vector-add/add/nope", ".", "-q"], capsys)
    assert status == 1 and "no variant 'nope'" in err
    assert run(["explain", "vector-add", ".", "-q"], capsys)[0] == 2


def test_explain_without_measured_work_says_what_is_unknown(tmp_path, capsys, monkeypatch):
    (tmp_path / "c.yaml").write_text(
        "roofgen: 1\nkind: case\nid: c\ntitle: C\nmachines: [{id: a100-40gb-sxm, version: 1}]\n"
        "kernels: [{id: k, operator: {kind: other}}]\n"
        "variants: [{id: v, launches: [{kernel: k, measurement: {time: 1 ms}}]}]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    status, out, _ = run(["explain", "c/k", ".", "-q"], capsys)
    assert status == 0
    assert "insufficient data" in out
    assert "no FLOP counts (measurement.flops)" in out
    assert "coverage   0 of" in out


# --------------------------------------------------------------------------- migrate

V0_MACHINE = """\
# yaml-language-server: $schema=../../schemas/machine.schema.json
roofgen: 0   # the draft format
kind: machine
id: seed
name: Seed GPU
clocks: {sm: 1410 MHz}
compute:
  - id: tensor
    kind: tensor
    # The tensor cores.
    peaks:
      - {precision: fp16, value: 312 TFLOP/s}   # datasheet
      # both roofs of FP32:
      - precision: fp32
        value:
          datasheet: 19.5 TFLOP/s
          measured: 18 TFLOP/s   # microbenchmark
memory:
  - {id: hbm, role: device, bandwidth: 1.5 TB/s}
  - {id: l2, role: llc, bandwidth: 5 TB/s}
"""

V0_CASE = """\
roofgen: 0
kind: case
id: pts
title: Points   # a title
machines: [seed]
kernels:
  - {id: low, operator: {kind: other}}
variants:
  - id: base
    launches:
      - kernel: low
        measurement:
          time: {median: 1.1 ms, q1: 1.09 ms, q3: 1.12 ms, warmup: 10, repeats: 100}
          flops: {tensor: {fp16: 1.5e9 FLOP}}
          bytes_hbm: 1.5 GB   # dram__bytes.sum
          bytes_l2: 2 GB      # lts__t_bytes.sum
          # where it ran
          grid: [108]
      - kernel: low
        measurement: {time: 1 ms, flops: {tensor: {fp16: 1e9 FLOP}}, bytes_hbm: 1 GB}
"""


def test_migration_registry():
    assert sorted(MIGRATIONS) == list(range(min(MIGRATIONS), CURRENT))
    assert all(m.target == m.source + 1 for m in MIGRATIONS.values())
    assert can_migrate(0) and not can_migrate(CURRENT) and not can_migrate(CURRENT + 1)
    assert not can_migrate("0") and not can_migrate(True)
    assert migrate_text(V0_CASE.replace("roofgen: 0", "roofgen: 1")).changed is False


def test_migrate_round_trip_keeps_comments_and_layout(tmp_path, capsys, monkeypatch):
    specs = tmp_path / "specs"
    (specs / "machines").mkdir(parents=True)
    (specs / "cases").mkdir()
    machine = specs / "machines" / "seed.yaml"
    case = specs / "cases" / "pts.yaml"
    machine.write_text(V0_MACHINE, encoding="utf-8")
    case.write_bytes(V0_CASE.replace("\n", "\r\n").encode("utf-8"))  # CRLF stays CRLF
    monkeypatch.chdir(tmp_path)
    status, _, err = run(["check", "specs"], capsys)
    assert status == 1
    assert ("spec format version 0 is older than the one this roofgen reads (1): update the "
            f"file with `roofgen migrate {Path('specs/machines/seed.yaml')}`") in err  # fmt: skip
    status, _, err = run(["migrate", "--check", "specs"], capsys)
    assert status == 1 and "2 need migrating" in err
    assert machine.read_text("utf-8") == V0_MACHINE  # --check writes nothing
    status, _, err = run(["migrate", "specs"], capsys)
    assert status == 0, err
    assert f"migrated {Path('specs/machines/seed.yaml')}: version 0 -> 1" in err
    new_machine = machine.read_text("utf-8")
    raw_case = case.read_bytes()
    assert raw_case.count(b"\r\n") == raw_case.count(b"\n")
    new_case = raw_case.decode("utf-8").replace("\r\n", "\n")
    for text in (new_machine, new_case):
        assert "roofgen: 1" in text and "roofgen: 0" not in text
    for comment in ("# yaml-language-server: $schema=../../schemas/machine.schema.json",
                    "roofgen: 1   # the draft format", "# The tensor cores.",
                    "# both roofs of FP32:", "# microbenchmark", "# datasheet"):  # fmt: skip
        assert comment in new_machine, comment
    flow_line = "measurement: {time: 1 ms, flops: {tensor: {fp16: 1e9 FLOP}}, bytes: {hbm: 1 GB}}"
    for comment in ("title: Points   # a title", "# dram__bytes.sum", "# lts__t_bytes.sum",
                    "# where it ran", flow_line):  # fmt: skip
        assert comment in new_case, comment
    # Lines the migration had no reason to touch are all still there.
    untouched = [line for line in V0_CASE.splitlines()
                 if "bytes_" not in line and not line.startswith("roofgen:")]  # fmt: skip
    assert [line for line in new_case.splitlines() if line in untouched] == untouched
    doc, _ = load_file(case)
    assert doc is not None
    assert doc.data["variants"][0]["launches"][0]["measurement"]["bytes"] == {
        "hbm": "1.5 GB", "l2": "2 GB"
    }  # fmt: skip
    mdoc, _ = load_file(machine)
    assert mdoc is not None
    assert mdoc.data["compute"][0]["peaks"] == {
        "fp16": "312 TFLOP/s",
        "fp32": {"datasheet": "19.5 TFLOP/s", "measured": "18 TFLOP/s"},
    }
    assert run(["check", "--strict", "specs"], capsys)[0] == 0
    status, _, err = run(["migrate", "--check", "specs"], capsys)
    assert status == 0 and "0 need migrating" in err
    before = new_machine
    assert run(["migrate", "specs"], capsys)[0] == 0
    assert machine.read_text("utf-8") == before


def test_migrate_refuses_what_it_cannot_migrate(tmp_path, capsys, monkeypatch):
    (tmp_path / "new.yaml").write_text("roofgen: 7\nkind: case\n", encoding="utf-8")
    both = V0_CASE.replace("bytes_l2: 2 GB", "bytes: {l2: 2 GB}")
    (tmp_path / "both.yaml").write_text(both, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, _, err = run(["migrate", "."], capsys)
    assert status == 1
    assert "new.yaml: spec format version 7 is newer than this roofgen's (1)" in err
    assert "has both 'bytes' and bytes_hbm: merge them by hand" in err
    assert (tmp_path / "both.yaml").read_text("utf-8") == both


@pytest.mark.parametrize(
    ("version", "shown"),
    [("9" * 5000, "'" + "9" * 35 + "...'"), ("[" * 3000 + "]" * 3000, "'" + "[" * 35 + "...'")],
    ids=["5000-digits", "deep-nest"],
)
def test_migrate_refuses_a_version_no_yaml_reader_takes(
    tmp_path, capsys, monkeypatch, version, shown
):
    """Python's int() refuses 4,300 digits and PyYAML recursed on the nest: exit 4."""
    (tmp_path / "odd.yaml").write_text(f"roofgen: {version}\nkind: case\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    status, _, err = run(["migrate", "."], capsys)
    assert status == 1, err
    assert f"odd.yaml: spec format version {shown} cannot be migrated (from 0 to 1 only)" in err


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda p: os.mkfifo(p), "is not a regular file"),  # read_bytes() waited forever
        (lambda p: p.symlink_to(os.devnull.replace("null", "zero")), "is not a regular file"),
        (lambda p: p.symlink_to(p.name), "cannot read the file"),  # a loop: was exit 4
        (lambda p: p.write_bytes(b"#" * (9 << 20)), "file is 9.4 MB, above the 8 MiB limit"),
    ],
    ids=["fifo", "dev-zero", "link-loop", "9-mib"],
)
def test_migrate_refuses_a_file_no_spec_can_be(tmp_path, capsys, monkeypatch, make, said):
    (tmp_path / "case.yaml").write_text(V0_CASE, encoding="utf-8")
    make(tmp_path / "odd.yaml")
    monkeypatch.chdir(tmp_path)
    status, _, err = run(["migrate", "."], capsys)
    assert status == 1
    assert f"odd.yaml: {said}" in err
    assert "migrated case.yaml: version 0 -> 1" in err  # the other files are migrated


# --------------------------------------------------------------------------- reference anchors


def test_schema_messages_name_the_reference_entry(tmp_path, capsys, monkeypatch):
    (tmp_path / "c.yaml").write_text(
        "roofgen: 1\nkind: case\nid: c\ntitle: C\nmachines: [{id: a100-40gb-sxm, version: 1}]\n"
        "kernels: [{id: k, operator: {kind: other}}]\n"
        "variants: [{id: v, launches: [{kernel: k, measurement: {tme: 1 ms}}]}]\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    status, _, err = run(["check", "."], capsys)
    assert status == 1
    assert "unknown key 'tme'; did you mean 'time'?" in err
    assert "(see reference: case-variants-launches-measurement)." in err
    assert "(see reference: case-variants-launches-measurement-time)" in err  # the missing key


def test_every_anchor_in_the_expected_messages_exists():
    anchors = {f.anchor for kind in reference.SPEC_KINDS for f in reference.fields(kind)}
    anchors |= set(reference.SPEC_KINDS)
    used = set()
    for expected in (ROOT / "tests" / "cases" / "invalid").glob("*/expected.txt"):
        used |= set(re.findall(r"\(see reference: ([a-z0-9_-]+)\)", expected.read_text("utf-8")))
    assert used and used <= anchors


@pytest.mark.parametrize(
    "kind, path, anchor",
    [
        ("case", ("variants", 0, "launches", 2, "measurement", "time", "q1"),
         "case-variants-launches-measurement-time-q1"),
        ("case", ("variants", 0, "launches", 0, "measurement", "bytes", "hbm", "read"),
         "case-variants-launches-measurement-bytes-level-read"),
        ("case", ("variants", 0, "launches", 0, "measurement", "flops", "tensor", "bf16"),
         "case-variants-launches-measurement-flops-unit-precision-fp64"),
        ("case", ("end_to_end", "baseline", "time"), "case-end_to_end-variant-time"),
        ("case", ("titel",), "case"),
        ("machine", ("memory", 1, "bandwith"), "machine-memory"),
        ("machine", ("compute", 0, "peaks", "int8", "measured"),
         "machine-compute-peaks-precision-int8-measured"),
        ("rules", ("rules", 0), None),
    ],
)  # fmt: skip
def test_anchor_for(kind: str, path: tuple[Any, ...], anchor: str | None):
    assert reference.anchor_for(kind, path) == anchor


# --------------------------------------------------------------------------- the tutorial


def _tutorial() -> tuple[list[str], dict[str, Any]]:
    """The tutorial's shell commands, in order, and its YAML edit."""
    text = TUTORIAL.read_text(encoding="utf-8")
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", text, re.M | re.S)
    commands = [
        line.strip()
        for lang, body in blocks
        if lang == "sh"
        for line in body.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    edits = [yaml.safe_load(body) for lang, body in blocks if lang == "yaml"]
    assert len(edits) == 1
    return commands, edits[0]


def _apply_edit(path: Path, edit: dict[str, Any]) -> None:
    """What the tutorial asks a person to do: replace the operator, the dtypes and the
    measurement with the ones it shows (round-trip, so the file's comments stay)."""
    _, snippet = load_round_trip(yaml.safe_dump(edit, sort_keys=False))
    y, data = load_round_trip(path.read_text(encoding="utf-8"))
    for key in ("operator", "dtypes"):
        data["kernels"][0][key] = snippet["kernels"][0][key]
    launch = data["variants"][0]["launches"][0]
    launch["measurement"] = snippet["variants"][0]["launches"][0]["measurement"]
    path.write_text(dump(y, data), encoding="utf-8")


@pytest.mark.slow
def test_the_first_case_tutorial_runs_end_to_end(tmp_path, capsys, monkeypatch):
    commands, edit = _tutorial()
    assert [c.split()[1] for c in commands if c.startswith("roofgen ")] == [
        "init", "check", "machines", "machines", "new", "check", "explain", "build",
    ]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    outputs: dict[str, str] = {}
    for command in commands:
        if command.startswith("pip install"):
            continue  # roofgen is installed already
        args = shlex.split(command)
        assert args[0] == "roofgen", command
        if args[1] == "check" and "new" in outputs:  # after `new case`: the person edits
            _apply_edit(tmp_path / "specs/cases/softmax.yaml", edit)
        status, out, err = run(args[1:], capsys)
        assert status == 0, f"{command}: {err}"
        outputs[args[1]] = out + err
    # What the page says `explain` prints is what it prints.
    assert "HBM2 (memory.hbm): it needs 691 us of the 812 us measured" in outputs["explain"]
    assert "85% of the bound against measured roofs" in outputs["explain"]
    text = TUTORIAL.read_text("utf-8")
    assert "it needs 691 us of the 812 us\nmeasured, 85% of the bound" in text
    for page in ("index.html", "cases/softmax/index.html", "guide/first-case/index.html",
                 "guide/measure/index.html", "guide/reference/index.html"):  # fmt: skip
        assert (tmp_path / "site" / page).is_file(), page


def test_new_case_on_a_machine_of_the_team(project, capsys):
    assert run(["machines", "vendor", "v100-sxm2", "-q"], capsys)[0] == 0
    assert (project / "specs/machines/v100-sxm2.yaml").is_file()
    status, _, err = run(["new", "case", "old-gpu", "--machine", "v100-sxm2"], capsys)
    assert status == 0, err
    status, _, err = run(["check", "--strict"], capsys)
    assert status == 1
    _placeholder_errors_only(err)


@pytest.mark.parametrize("verb", [["init"], ["new", "case"], ["explain"], ["migrate"]])
def test_the_new_verbs_take_the_common_flags(verb, capsys):
    assert main([*verb, "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--strict", "--quiet", "--verbose"):
        assert flag in text
