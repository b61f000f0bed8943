"""Hostile input to `roofgen import`: each case once ended in an internal error (exit 4)
or ran for minutes; now it imports, or stops with exit 1 and a message that says what
is wrong. Time bounds are generous (pytest-timeout): each guards against a quadratic
cost that took minutes, where the linear one takes well under a second.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofgen.cli import main
from roofgen.importers.kernel_names import KernelIds, _without_templates, derived_id

ROOT = Path(__file__).resolve().parent.parent
SGEMM = ROOT / "tests" / "data" / "ncu" / "01_sgemm.csv"
RANDOM_INIT = "void randomInit<float>(T1 *, int, int, unsigned int)"


@pytest.fixture(autouse=True)
def _in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def _import_ncu(csv: Path, *extra: str) -> list[str]:
    return ["import", "ncu", str(csv), "--machine", "a100-40gb-sxm", *extra]


def _sgemm_with(tmp_path: Path, old: str, new: str) -> Path:
    text = SGEMM.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "profile.csv"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- names


def _innermost_again_and_again(text: str) -> str:
    """The old way: remove the innermost <...> until none is left (quadratic)."""
    while True:
        stripped = re.sub(r"<[^<>]*>", "", text)
        if stripped == text:
            return text
        text = stripped


@given(st.text(alphabet="<>a (:", max_size=40))
def test_templates_are_removed_as_before(text: str) -> None:
    assert _without_templates(text) == _innermost_again_and_again(text)


@pytest.mark.timeout(60)
def test_a_name_nested_300000_deep_costs_linear_time() -> None:
    """60,000 levels took 25.6 s (each level a pass over the name); 300,000 would take
    some ten minutes that way, and take a fraction of a second in one pass."""
    deep = 300_000
    assert derived_id("void k" + "<" * deep + "int" + ">" * deep + "(int)") == "k"
    assert derived_id("void ns::f<" + "a<" * deep + ">" * deep + ">(int)") == "f"


@pytest.mark.timeout(60)
def test_mangled_names_of_any_length() -> None:
    """A 5,000-digit length was an integer Python refuses to read; 100,000 components
    were each copied from the rest of the name (quadratic). An id comes from the first
    4,096 characters of a name and is at most 64 characters long (a spec's ids are)."""
    assert derived_id("_Z7gemm_v1IfEvPT_S1_S1_iii") == "gemm_v1"
    # the first ten digits are a length past the name's end: the rest is the name
    assert derived_id("_Z" + "9" * 5000 + "abc") == "9" * 64
    assert derived_id("_Z" + "1a" * 100_000 + "3end") == "a"  # 'end' lies past the cut
    assert derived_id("_Z" + "1a" * 100 + "3end") == "end"


@pytest.mark.timeout(60)
def test_many_instances_of_one_template_get_ids_in_linear_time() -> None:
    """Every instance of ``k<...>`` gives the id 'k'; the n-th tried k-2 .. k-n first."""
    ids = KernelIds()
    count = 30_000
    made = [ids.of(f"void k<{i}>(int)") for i in range(count)]
    assert made[:3] == ["k", "k-2", "k-3"] and made[-1] == f"k-{count}"
    assert ids.of("void k<1>(int)") == "k-2"  # a kernel keeps its id
    assert ids.of("k-5(int)") == "k-5-2"  # a kernel named like a suffix taken


def test_a_200_kb_kernel_name_is_refused(tmp_path: Path, capsys) -> None:
    bad = _sgemm_with(tmp_path, RANDOM_INIT, "void k" + "x" * 200_000 + "(int)")
    assert main(_import_ncu(bad, "-o", "case.yaml")) == 1
    err = capsys.readouterr().err
    assert err == (
        f"{bad}: not an Nsight Compute CSV export: a field of more than 131,072 characters\n"
    )
    assert not (tmp_path / "case.yaml").exists()


@pytest.mark.timeout(60)
def test_a_name_nested_60000_deep_imports(tmp_path: Path, capsys) -> None:
    deep = 60_000
    bad = _sgemm_with(tmp_path, RANDOM_INIT, "void k" + "<" * deep + ">" * deep + "(int)")
    assert main(_import_ncu(bad, "-o", "case.yaml", "-q")) == 0, capsys.readouterr().err
    text = (tmp_path / "case.yaml").read_text(encoding="utf-8")
    assert "  - id: k\n" in text
    # a kernel name is cut at 4,096 characters (kernel_names.MAX_NAME) before any step
    import yaml

    (kernel,) = [k for k in yaml.safe_load(text)["kernels"] if k["id"] == "k"]
    assert len(kernel["name"]) == 4096 and kernel["name"].endswith("<\u2026")
    assert main(["check", "case.yaml"]) == 0


def test_a_control_character_in_a_kernel_name_is_shown_not_a_bug_report(
    tmp_path: Path, capsys
) -> None:
    """ESC in a profile's kernel name is written as its escape, which a spec may hold;
    it used to make a case that failed its own check ("Please report this")."""
    bad = _sgemm_with(
        tmp_path, RANDOM_INIT, "void random\x1bInit<float>(T1 *, int, int, unsigned int)"
    )
    assert main(_import_ncu(bad, "-o", "case.yaml", "-q")) == 0, capsys.readouterr().err
    text = (tmp_path / "case.yaml").read_text(encoding="utf-8")
    assert "\x1b" not in text.replace("\\x1b", "")  # no raw ESC in the file
    assert "random\\x1bInit" in text
    assert main(["check", "case.yaml"]) == 0


# --------------------------------------------------------------------------- size


def test_a_case_beyond_a_spec_files_values_is_refused_before_writing(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10,000 kernels made a case of more than 500,000 values: minutes of writing, then
    'the case roofgen built does not check'. The count comes first now (here with the
    limit lowered to 100 values, which the three launches of the profile pass)."""
    import roofgen.spec.yamlload

    monkeypatch.setattr(roofgen.spec.yamlload, "MAX_NODES", 100)
    assert main(_import_ncu(SGEMM, "-o", "case.yaml")) == 1
    assert capsys.readouterr().err == (
        "the profile makes 3 launch entries, more than one case file may hold (100 values): "
        "import fewer kernels (--kernel-map REGEX=ID --only-mapped, or ncu --kernel-name "
        "and --launch-count when profiling)\n"
    )
    assert not (tmp_path / "case.yaml").exists()


def _kernels_csv(path: Path, count: int) -> Path:
    lines = SGEMM.read_text(encoding="utf-8").splitlines()
    header, first = lines[0], [row for row in lines[1:] if row.startswith('"0",')]
    rows = [
        row.replace('"0"', f'"{i}"', 1).replace(RANDOM_INIT, f"void kern<{i}>(T1 *, int)")
        for i in range(count)
        for row in first
    ]
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_ten_thousand_kernels_are_refused_in_seconds(tmp_path: Path, capsys) -> None:
    """They failed after 130 s (a search of the kernel list per kernel, then the write)."""
    profile = _kernels_csv(tmp_path / "many.csv", 10_000)
    assert main(_import_ncu(profile, "-o", "case.yaml", "--partial", "-q")) == 1
    assert capsys.readouterr().err.startswith(
        "the profile makes 10,000 launch entries, more than one case file may hold"
    )


# --------------------------------------------------------------------------- --into

VECTOR_ADD = ROOT / "tests" / "cases" / "valid" / "a100-kernels" / "vector-add.yaml"
INTO = ["--into", "case.yaml", "--variant", "profiled", "--kernel-map", "gemm_v1=add",
        "--only-mapped"]  # fmt: skip
FIX_FIRST = (
    "case.yaml: --into adds a variant to a case roofgen can read: fix the case first "
    "(roofgen check case.yaml)"
)


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("kind: case\n", "kind: case\nkind: case\n",
         "case.yaml:6:1: kind: duplicate key 'kind' (first at line 5): YAML keeps only one "
         "of them; remove or rename one"),
        ("kernels:\n  - id: add\n", "kernels: null\nother:\n  - id: add\n",
         "case.yaml:35:10: kernels: null is empty, expected a list"),
        ("machines:\n  - {id: a100-40gb-sxm, version: 1}\n", "machines: a100-40gb-sxm\n",
         "case.yaml:14:11: machines: 'a100-40gb-sxm' is a string, expected a list"),
        ("machines:\n  - {id: a100-40gb-sxm, version: 1}\n", "machines: [5]\n",
         "case.yaml:14:12: machines[0]: 5 is a number, expected another type"),
        ("kernels:\n", "kernel:\n",
         "case.yaml:4:1: missing required key 'kernels' (The kernels of this case) (see "
         "reference: case-kernels)"),
        ("title: Vectorised", "title: caf\u00e9 Vectorised",
         "case.yaml:7:11: byte 0xe9 is not valid UTF-8: save the file as UTF-8"),
    ],
    ids=["duplicate-key", "kernels-null", "machines-a-string", "machine-a-number",
         "no-kernels", "latin-1"],
)  # fmt: skip
def test_into_a_case_roofgen_cannot_read_is_refused(tmp_path: Path, capsys, old, new, said):
    """Each ended in an internal error, the file untouched; now check's own message says
    what to fix, and the file stays untouched."""
    text = VECTOR_ADD.read_text(encoding="utf-8")
    assert text.count(old) == 1
    encoding = "latin-1" if "caf" in new else "utf-8"
    (tmp_path / "case.yaml").write_bytes(text.replace(old, new).encode(encoding))
    before = (tmp_path / "case.yaml").read_bytes()
    assert main(_import_ncu(SGEMM, *INTO)) == 1
    assert capsys.readouterr().err.splitlines() == [said, FIX_FIRST]
    assert (tmp_path / "case.yaml").read_bytes() == before


def test_into_a_case_with_a_tab_before_a_comment_says_where(tmp_path: Path, capsys):
    """YAML allows a tab before a comment and check accepts it; ruamel.yaml, which adds
    the lines, refuses it, which ended in an internal error."""
    text = VECTOR_ADD.read_text(encoding="utf-8").replace("kind: case\n", "kind: case\t# c\n")
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    assert main(["check", "case.yaml"]) == 0
    capsys.readouterr()
    assert main(_import_ncu(SGEMM, *INTO)) == 1
    assert capsys.readouterr().err == (
        "case.yaml:5:11: roofgen adds lines to a case with ruamel.yaml, which cannot read "
        "this line (found character '\\t' that cannot start any token): replace the tab "
        "with spaces\n"
    )
    assert (tmp_path / "case.yaml").read_text(encoding="utf-8") == text


def test_into_a_case_with_problems_of_its_own_still_adds_the_variant(tmp_path: Path, capsys):
    """Problems --into does not touch stay the case's own: a placeholder, no title."""
    text = VECTOR_ADD.read_text(encoding="utf-8")
    text = text.replace("time: 12.40 ms", "time: TODO", 1)
    text = re.sub(r"^title: .*\n", "", text, flags=re.MULTILINE)
    (tmp_path / "case.yaml").write_text(text, encoding="utf-8")
    assert main(_import_ncu(SGEMM, *INTO, "-q")) == 0, capsys.readouterr().err
    assert "  - id: profiled\n" in (tmp_path / "case.yaml").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- ert

ERT = ROOT / "tests" / "data" / "ert" / "01_roofline.json"


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("1e300", "'1e+300 GFLOP/s' is too large: the largest FLOP rate roofgen computes with "
                  "is 1e60 FLOP/s; write e.g. '312 TFLOP/s'"),
        ("1e-320", "'1e-320 GFLOP/s' is too small: the smallest FLOP rate roofgen computes "
                   "with, other than 0, is 1e-60 FLOP/s; write e.g. '312 TFLOP/s'"),
        ("0", "'0 GFLOP/s' is not a rate: not a positive, finite number"),
        ("-5", "'-5 GFLOP/s' is not a rate: not a positive, finite number"),
        ("NaN", "'nan GFLOP/s' is not a rate: not a positive, finite number"),
    ],
    ids=["huge", "subnormal", "zero", "negative", "nan"],
)  # fmt: skip
def test_ert_rates_beyond_what_roofgen_computes_with(tmp_path: Path, capsys, value, said):
    """Each made a machine file that did not check, refused with 'please report'; the
    subnormal one was written, and its build divided by zero."""
    text = ERT.read_text(encoding="utf-8")
    assert text.count("4258.4") == 1
    (tmp_path / "roofline.json").write_text(text.replace("4258.4", value), encoding="utf-8")
    status = main(["import", "ert", "roofline.json", "-o", "m.yaml", "--id", "m", "--name", "M",
                   "--sm-clock", "1329 MHz"])  # fmt: skip
    assert status == 1
    assert capsys.readouterr().err == f"roofline.json: gflops.data entry 'FP64 GFLOPs': {said}\n"
    assert not (tmp_path / "m.yaml").exists()
