"""roofgen's machine library: every machine validates and is sourced, and cases pin it.

The library lives in ``roofgen/machines/<id>/v<N>.yaml``. A case refers to a
library machine by id from any folder; a machine file with the same id in the
team's specs takes precedence; an unpinned reference is a warning naming the pin;
a pin this roofgen cannot honour is an error naming ``roofgen machines vendor``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from roofgen.cli import main
from roofgen.machines.lookup import find_machine
from roofgen.spec import build, crossrefs, library
from roofgen.spec.load import load
from roofgen.spec.quantity import parse_quantity

EXPECTED_IDS = [
    "a100-40gb-sxm",
    "a100-80gb-sxm",
    "b200-sxm",
    "h100-pcie",
    "h100-sxm",
    "h200-sxm",
    "l40s",
    "mi250x",
    "mi300x",
    "v100-sxm2",
]

# Content hashes of released versions. A released version is never edited: change a
# roof by adding v<N+1>.yaml. Adding a version means adding its hash here.
RELEASED = {
    ("a100-40gb-sxm", 1): "7a33b77f9282d98ebcd49c9fdd6b84a36fe415229af9bb6cfb1921dc1ff1d651",
    ("a100-80gb-sxm", 1): "0044165e68bc189a06cca3012a4068d04301f3beb041dee380fc7e8fda4b7e74",
    ("b200-sxm", 1): "18de931385f10641aff0899d4179127aae4e949d0553955b105857235292d2fa",
    ("h100-pcie", 1): "a5dc885405577cc36ddf2ca5d178c9bf36696d7886fd79dce205478bc978210e",
    ("h100-sxm", 1): "110954e7fa4b6dad26c27dca9f68cd0b4e97caf67f64d370ab6a35ade126e52d",
    ("h200-sxm", 1): "25c3bacccb11c62bd0d2ba363d3e2306d9336750d94ab67f35e1c5b85f4a838d",
    ("l40s", 1): "ac6b91bd83a554f2361ce96eeb4a8cd556b380d49dbfd41dae3d42488e00a406",
    ("mi250x", 1): "f1a3aef9ab81d5620abf93d3652130ac9a73ec605de96b397b3f48be37be903f",
    ("mi300x", 1): "b6868e2254ce0371d1b358e1cf3d7a96b7cbd1ab735a62636cf03efb8ddfe173",
    ("v100-sxm2", 1): "2ff5d864606050590818bd7ef77432127d115c7151bb464687c979239c074946",
}

ALL = [(i, v) for i in library.ids() for v in library.versions(i)]


def test_the_library_holds_the_machines_asked_for():
    assert library.ids() == EXPECTED_IDS


@pytest.mark.parametrize(("ident", "version"), ALL, ids=[f"{i}-v{v}" for i, v in ALL])
def test_every_library_machine_validates(ident: str, version: int):
    entry = library.entry(ident, version)
    assert entry is not None
    doc = library.document(ident, version)
    assert doc is not None, library._load(ident, version)[1]
    assert crossrefs.check_machine(doc) == []
    assert doc.data["id"] == ident
    assert doc.data["version"] == version
    machine = build.machine(doc.data, doc.file)
    assert machine.sm_clock_hz > 0
    assert entry.text().startswith("# yaml-language-server: $schema=")
    assert "# Where the numbers come from" in entry.text()


@pytest.mark.parametrize(("ident", "version"), ALL, ids=[f"{i}-v{v}" for i, v in ALL])
def test_released_versions_never_change(ident: str, version: int):
    doc = library.document(ident, version)
    assert doc is not None
    assert (ident, version) in RELEASED, "a new version: add its content hash to RELEASED"
    assert library.content_hash(doc.data) == RELEASED[(ident, version)], (
        f"{ident} v{version} was edited after release: add v{version + 1}.yaml instead"
    )


def _value(roof: Any, key: str = "datasheet") -> Any:
    return roof.get(key) if isinstance(roof, dict) else (roof if key == "datasheet" else None)


@pytest.mark.parametrize("ident", EXPECTED_IDS)
def test_every_sparse_peak_is_exactly_twice_its_dense_peak(ident: str):
    doc = library.document(ident)
    assert doc is not None
    pairs = 0
    for unit in doc.data["compute"]:
        peaks = unit["peaks"]
        for precision, roof in peaks.items():
            if not precision.endswith("-sparse"):
                continue
            dense = precision.removesuffix("-sparse")
            assert dense in peaks, f"{unit['id']}/{precision} has no dense peak beside it"
            dimension = "op_rate" if dense.startswith("int") else "flop_rate"
            for key in ("datasheet", "measured"):
                if _value(roof, key) is None or _value(peaks[dense], key) is None:
                    continue
                sparse_value = parse_quantity(_value(roof, key), dimension)
                dense_value = parse_quantity(_value(peaks[dense], key), dimension)
                assert sparse_value == 2 * dense_value, (unit["id"], precision, key)
                pairs += 1
    has_sparse = any(p.endswith("-sparse") for u in doc.data["compute"] for p in u["peaks"])
    assert pairs > 0 or not has_sparse


def _roofs(data: dict[str, Any]) -> list[tuple[str, Any]]:
    out = []
    for unit in data["compute"]:
        out += [(f"{unit['id']}/{p}", v) for p, v in unit["peaks"].items()]
        out += [(f"{unit['id']}/{c['id']}", c["value"]) for c in unit.get("ceilings", [])]
    out += [(m["id"], m["bandwidth"]) for m in data["memory"]]
    out += [(k["id"], k["bandwidth_per_direction"]) for k in data.get("links", [])]
    if "power" in data:
        out.append(("power", data["power"]["limit"]))
    return out


@pytest.mark.parametrize("ident", EXPECTED_IDS)
def test_every_figure_names_its_source(ident: str):
    doc = library.document(ident)
    assert doc is not None
    for where, roof in _roofs(doc.data):
        assert isinstance(roof, dict), f"{where}: write the roof with its source"
        if "datasheet" in roof:
            assert roof.get("source", "").strip(), f"{where}: datasheet value without a source"
        if "measured" in roof:
            assert roof.get("measured_source", "").strip(), f"{where}: measured without a source"


def test_dense_and_sparse_and_links_are_per_direction():
    a100 = library.document("a100-40gb-sxm")
    assert a100 is not None
    peaks = a100.data["compute"][0]["peaks"]
    assert parse_quantity(peaks["bf16"]["datasheet"], "flop_rate") == 312e12
    assert parse_quantity(peaks["bf16-sparse"]["datasheet"], "flop_rate") == 624e12
    nvlink = a100.data["links"][0]
    assert parse_quantity(nvlink["bandwidth_per_direction"]["datasheet"], "bandwidth") == 300e9
    assert "600 GB/s two-way" in nvlink["bandwidth_per_direction"]["source"]


# ------------------------------------------------------------------ cases and pins


def _case(machines: str, ident: str = "c", unit: str = "fp32", level: str = "hbm") -> str:
    return (
        "roofgen: 1\nkind: case\n"
        f"id: {ident}\ntitle: C\nmachines: {machines}\n"
        "kernels:\n  - {id: k, operator: {kind: elementwise}}\n"
        "variants:\n  - id: base\n    launches:\n      - kernel: k\n        measurement:\n"
        "          time: {median: 1 ms, q1: 0.99 ms, q3: 1.01 ms, repeats: 50, warmup: 5}\n"
        f"          flops: {{{unit}: {{fp32: 1e9 FLOP}}}}\n          bytes: {{{level}: 1 GB}}\n"
    )


def _check(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(["check", *args, str(tmp_path)])
    return status, capsys.readouterr().err


@pytest.fixture(autouse=True)
def _no_colour(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(tmp_path)


def test_a_pinned_library_machine_checks_clean_from_any_folder(tmp_path, capsys):
    (tmp_path / "case.yaml").write_text(_case("[{id: a100-80gb-sxm, version: 1}]"))
    status, err = _check(tmp_path, capsys)
    assert status == 0, err
    assert "0 error(s), 0 warning(s)" in err
    loaded = load([tmp_path])
    assert loaded.specs is not None
    machine = loaded.specs.machines["a100-80gb-sxm"]
    assert machine.name == "NVIDIA A100 80GB SXM4"
    assert machine.file == "roofgen-library/a100-80gb-sxm/v1.yaml"


def test_an_unpinned_library_machine_is_a_warning_naming_the_pin(tmp_path, capsys):
    (tmp_path / "case.yaml").write_text(_case("[h200-sxm]"))
    status, err = _check(tmp_path, capsys)
    assert status == 0
    assert (
        "case.yaml:5:12: warning: machines[0]: machine 'h200-sxm' comes from roofgen's machine "
        "library and is not pinned, so a later roofgen could move its roofs: write "
        "`- {id: h200-sxm, version: 1}`"
    ) in err
    assert main(["check", "--strict", str(tmp_path)]) == 1


def test_a_pinned_version_not_shipped_names_the_vendor_command(tmp_path, capsys):
    (tmp_path / "case.yaml").write_text(_case("[{id: l40s, version: 7}]"))
    status, err = _check(tmp_path, capsys)
    assert status == 1
    assert "machines[0].version: the case is pinned to version 7 of library machine 'l40s'" in err
    assert "this roofgen does not ship (it ships version 1)" in err
    assert "`roofgen machines vendor l40s --version 7`" in err
    assert "unknown machine" not in err  # one error, not two


def test_a_content_pin_must_match(tmp_path, capsys):
    digest = library.content_hash(library.document("mi300x").data)  # type: ignore[union-attr]
    good = f"[{{id: mi300x, version: 1, sha256: {digest}}}]"
    (tmp_path / "case.yaml").write_text(_case(good, unit="vector"))
    status, err = _check(tmp_path, capsys)
    assert status == 0, err
    bad = f"[{{id: mi300x, version: 1, sha256: {'ab' * 32}}}]"
    (tmp_path / "case.yaml").write_text(_case(bad, unit="vector"))
    status, err = _check(tmp_path, capsys)
    assert status == 1
    assert (
        "machines[0].sha256: the case pins machine 'mi300x' to content sha256 abababababab" in err
    )


def test_two_cases_pinning_different_versions_is_an_error(tmp_path, capsys, monkeypatch):
    entry = library.entry("v100-sxm2", 1)
    assert entry is not None
    fake = library.LibraryMachine("v100-sxm2", 2, entry.path)
    index = {k: dict(v) for k, v in library.index().items()}
    index["v100-sxm2"][2] = fake
    monkeypatch.setattr(library, "index", lambda: index)
    (tmp_path / "a.yaml").write_text(_case("[{id: v100-sxm2, version: 1}]", "a"))
    (tmp_path / "b.yaml").write_text(_case("[{id: v100-sxm2, version: 2}]", "b"))
    status, err = _check(tmp_path, capsys)
    assert status == 1
    assert "library machine 'v100-sxm2' is pinned to version 2 here and to version 1 at" in err


def test_a_machine_file_in_the_specs_takes_precedence(tmp_path, capsys):
    (tmp_path / "machine.yaml").write_text(
        "roofgen: 1\nkind: machine\nid: h100-sxm\nname: Our H100\nversion: 3\n"
        "clocks: {sm: 1.5 GHz}\ncompute:\n  - {id: fp32, kind: fp32, peaks: {fp32: 50 TFLOP/s}}\n"
        "memory:\n  - {id: hbm, role: device, bandwidth: 3 TB/s}\n"
    )
    (tmp_path / "case.yaml").write_text(_case("[{id: h100-sxm, version: 3}]"))
    status, err = _check(tmp_path, capsys)
    assert status == 0, err
    loaded = load([tmp_path])
    assert loaded.specs is not None
    assert loaded.specs.machines["h100-sxm"].name == "Our H100"
    found, _ = find_machine("h100-sxm", [tmp_path])
    assert found is not None and not found.from_library


def test_analyze_sees_library_machines(tmp_path, capsys):
    (tmp_path / "case.yaml").write_text(_case("[{id: b200-sxm, version: 1}]"))
    assert main(["analyze", "--format", "json", str(tmp_path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "b200-sxm" in json.dumps(report)


@pytest.mark.slow
def test_build_sees_library_machines(tmp_path, make_settings):
    pytest.importorskip("altair")
    pytest.importorskip("jinja2")
    from roofgen.api import build_site

    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "case.yaml").write_text(_case("[{id: mi250x, version: 1}]", unit="vector"))
    settings = make_settings(tmp_path, name="Library")
    result = build_site(
        [specs], settings, tmp_path / "out", markdown_only=True, cache_dir=tmp_path / "cache"
    )
    assert result.ok, [p.format() for p in result.problems]
    pages = "".join(p.read_text("utf-8") for p in (tmp_path / "out").rglob("*.md"))
    assert "AMD Instinct MI250X (OAM, both GCDs)" in pages


# ------------------------------------------------------------------ the CLI


def test_machines_lists_the_library(capsys):
    assert main(["machines"]) == 0
    out = capsys.readouterr().out
    for ident in EXPECTED_IDS:
        assert re.search(rf"^{re.escape(ident)}\s", out, re.MULTILINE), ident
    assert "989.5 TFLOP/s" in out  # H100 SXM dense BF16
    assert main(["machines", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["machines"]
    a100 = next(r for r in rows if r["id"] == "a100-40gb-sxm")
    assert a100["bf16_dense_flop_per_s"] == 312e12
    assert a100["fp16_dense_flop_per_s"] == 312e12
    assert a100["device_bandwidth_b_per_s"] == 1.555e12
    assert a100["versions"] == [1]


def test_machines_show_prints_the_pin(capsys):
    assert main(["machines", "show", "h100-pcie"]) == 0
    out = capsys.readouterr().out
    digest = RELEASED[("h100-pcie", 1)]
    assert "- {id: h100-pcie, version: 1}" in out
    assert f'- {{id: h100-pcie, version: 1, sha256: "{digest}"}}' in out
    assert main(["machines", "show", "h100-pcie", "--format", "yaml"]) == 0
    assert capsys.readouterr().out == library.entry("h100-pcie").text()  # type: ignore[union-attr]
    assert main(["machines", "show", "nope"]) == 1
    assert "no machine 'nope' in roofgen's library" in capsys.readouterr().err


def test_vendor_copies_the_machine_into_the_specs(tmp_path, capsys):
    (tmp_path / "specs").mkdir()
    assert main(["machines", "vendor", "l40s", "--version", "1"]) == 0
    target = tmp_path / "specs" / "machines" / "l40s.yaml"
    text = target.read_text("utf-8")
    assert "Vendored from roofgen" in text
    assert main(["machines", "vendor", "l40s"]) == 1  # never overwrites without --force
    assert "exists; pass --force" in capsys.readouterr().err
    assert main(["machines", "vendor", "l40s", "--force"]) == 0
    found, _ = find_machine("l40s", [tmp_path / "specs"])
    assert found is not None and not found.from_library
    assert library.content_hash(found.data) == RELEASED[("l40s", 1)]
    (tmp_path / "specs" / "case.yaml").write_text(_case("[{id: l40s, version: 1}]", level="gddr6"))
    assert main(["check", str(tmp_path / "specs")]) == 0
