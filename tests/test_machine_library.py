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
    "mi250x-gcd",
    "mi300x",
    "v100-sxm2",
]

# Content hashes of released versions. A released version is never edited: change a
# roof by adding v<N+1>.yaml. Adding a version means adding its hash here.
RELEASED = {
    ("a100-40gb-sxm", 1): "7a33b77f9282d98ebcd49c9fdd6b84a36fe415229af9bb6cfb1921dc1ff1d651",
    ("a100-40gb-sxm", 2): "1e56dffd288718e17a1b606ee1f20be6eaec21196af31d2ec2a029515db8a0c1",
    ("a100-80gb-sxm", 1): "0044165e68bc189a06cca3012a4068d04301f3beb041dee380fc7e8fda4b7e74",
    ("b200-sxm", 1): "18de931385f10641aff0899d4179127aae4e949d0553955b105857235292d2fa",
    ("b200-sxm", 2): "e9f00b919d1330930a4bbcb13ba3132e13a19d7fdccb6ca12ebd861f68e3d425",
    ("h100-pcie", 1): "a5dc885405577cc36ddf2ca5d178c9bf36696d7886fd79dce205478bc978210e",
    ("h100-pcie", 2): "9bc66257d71fd1f6573f8e5c985a3f9e0e96d2daf777b6a561ab7f27b07e5a24",
    ("h100-sxm", 1): "110954e7fa4b6dad26c27dca9f68cd0b4e97caf67f64d370ab6a35ade126e52d",
    ("h100-sxm", 2): "5dd551bf3ba9dc068bb99cdce6e203207bf2a3cf0d694e5e5a677aeeaaa37350",
    ("h200-sxm", 1): "25c3bacccb11c62bd0d2ba363d3e2306d9336750d94ab67f35e1c5b85f4a838d",
    ("h200-sxm", 2): "c8e3a518d432f87ead8e2d5aa83e982f213768142cc4158992fd08728a67fff5",
    ("l40s", 1): "ac6b91bd83a554f2361ce96eeb4a8cd556b380d49dbfd41dae3d42488e00a406",
    ("mi250x", 1): "f1a3aef9ab81d5620abf93d3652130ac9a73ec605de96b397b3f48be37be903f",
    ("mi250x", 2): "1b423a616bde12307273141b9c8df14869d3384d48414a0b9e2b6cd821a30a70",
    ("mi250x-gcd", 1): "c1de8c9defa6b0aa7afcbaeea9e9cf84ea099611f16aede8d847e4573b73463a",
    ("mi300x", 1): "b6868e2254ce0371d1b358e1cf3d7a96b7cbd1ab735a62636cf03efb8ddfe173",
    ("mi300x", 2): "c5855023a31587725db854b7e42b865b2862f58f77d6bca45ac6b2b2cc4c8311",
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
        "`- {id: h200-sxm, version: 2}`"
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
    good = f"[{{id: mi300x, version: 2, sha256: {digest}}}]"
    (tmp_path / "case.yaml").write_text(_case(good, unit="vector"))
    status, err = _check(tmp_path, capsys)
    assert status == 0, err
    bad = f"[{{id: mi300x, version: 2, sha256: {'ab' * 32}}}]"
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
    assert a100["versions"] == [1, 2]


def test_machines_show_prints_the_pin(capsys):
    assert main(["machines", "show", "h100-pcie"]) == 0
    out = capsys.readouterr().out
    digest = RELEASED[("h100-pcie", 2)]
    assert "- {id: h100-pcie, version: 2}" in out
    assert f'- {{id: h100-pcie, version: 2, sha256: "{digest}"}}' in out
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


def test_a_case_pinned_to_an_older_version_is_told_what_the_newer_one_corrects(tmp_path, capsys):
    (tmp_path / "case.yaml").write_text(_case("[{id: h100-sxm, version: 1}]"))
    status, err = _check(tmp_path, capsys)
    assert status == 0
    assert (
        "case.yaml:5:36: warning: machines[0].version: the case is pinned to version 1 of "
        "library machine 'h100-sxm'; version 2 corrects it (version 2: Each peak states the "
        "clock it assumes"
    ) in err
    assert "pin `- {id: h100-sxm, version: 2}`" in err
    (tmp_path / "case.yaml").write_text(_case("[{id: h100-sxm, version: 2}]"))
    assert "machines[0].version" not in _check(tmp_path, capsys)[1]


def _fp32_roof_at_1980_mhz(tmp_path: Path, capsys: pytest.CaptureFixture[str], version: int):
    case = _case(f"[{{id: h100-sxm, version: {version}}}]").replace(
        "          flops:", "          clocks: {sm: 1980 MHz}\n          flops:"
    )
    (tmp_path / "case.yaml").write_text(case)
    capsys.readouterr()
    assert main(["analyze", "--format", "json", str(tmp_path)]) == 0
    launch = json.loads(capsys.readouterr().out)["cases"][0]["variants"][0]["launches"][0]
    rows = launch["rooflines"]["resources"]["resources"]
    return {r["resource"]: r["capacity"] for r in rows}


def test_h100_sxm_fp32_at_1980_mhz_has_the_datasheets_67_tflops_roof(tmp_path, capsys):
    # NVIDIA quotes FP32 67 TFLOP/s at the 1980 MHz SM boost clock (H100 datasheet, SXM5;
    # 132 SMs x 128 lanes x 2 FLOP x 1980 MHz = 66.9 TFLOP/s). Version 1 stated it at
    # 1830 MHz and so scaled it to 67 x 1980 / 1830 = 72.5 TFLOP/s.
    assert _fp32_roof_at_1980_mhz(tmp_path, capsys, 2)["compute.fp32"] == pytest.approx(67e12)
    old = _fp32_roof_at_1980_mhz(tmp_path, capsys, 1)["compute.fp32"]
    assert old == pytest.approx(67e12 * 1980 / 1830)


def test_h100_sxm_fp64_tensor_is_stated_at_1980_mhz_and_bf16_at_1830():
    machine = build.machine(library.document("h100-sxm", 2).data)  # type: ignore[union-attr]
    tensor = machine.unit("tensor")
    assert tensor is not None
    # At a 1980 MHz launch the FP64-tensor roof is its datasheet 67 TFLOP/s unchanged.
    assert tensor.peaks["fp64"].clock_factor(1980e6, "datasheet") == 1.0
    assert tensor.peaks["fp64"].datasheet == pytest.approx(67e12)
    # BF16 is stated at the 1830 MHz tensor boost clock: 1980 / 1830 = 1.082 at 1980 MHz.
    assert tensor.peaks["bf16"].clock_factor(1980e6, "datasheet") == pytest.approx(1980 / 1830)
    # Its MAMF value was measured with unlocked clocks at 700 W: used as is.
    assert tensor.peaks["bf16"].measured_unlocked
    assert tensor.peaks["bf16"].clock_factor(1980e6, "measured") == 1.0
    assert tensor.peaks["bf16"].measured == pytest.approx(794.5e12)


def test_a100_sxm4_base_clock_is_the_sxm4_boards():
    # TechPowerUp GPU database, "NVIDIA A100 SXM4 40 GB": base 1095 MHz, boost 1410 MHz;
    # 765 MHz (version 1) is the A100 PCIe card's base clock.
    machine = build.machine(library.document("a100-40gb-sxm", 2).data)  # type: ignore[union-attr]
    assert machine.base_sm_clock_hz == pytest.approx(1095e6)


def _latest(ident: str):
    doc = library.document(ident)
    assert doc is not None
    return build.machine(doc.data)


@pytest.mark.parametrize(
    ("ident", "tensor_mhz", "sm_mhz", "fp32_tflops"),
    [
        # NVIDIA's H100 whitepaper, Table 3 (via NVIDIA developer forum thread 244727 and
        # glennklockwood.com): tensor boost 1830 MHz (SXM5) / 1620 MHz (PCIe), SM boost
        # 1980 / 1755 MHz; FP32 67 / 51 TFLOP/s (H100 datasheet). H200: the H100 SXM's SMs.
        ("h100-sxm", 1830, 1980, 67),
        ("h100-pcie", 1620, 1755, 51),
        ("h200-sxm", 1830, 1980, 67),
        # HGX B200 datasheet FP32 75 TFLOP/s = 148 x 128 x 2 x 1980 MHz; hmc-tech's 1.86 GHz
        # "tensor clock": 2250e12 / (148 x 8192 x 1860e6) = 0.998.
        ("b200-sxm", 1860, 1980, 75),
    ],
)
def test_each_nvidia_peak_states_the_clock_its_datasheet_figure_assumes(
    ident: str, tensor_mhz: int, sm_mhz: int, fp32_tflops: float
):
    machine = _latest(ident)
    tensor, fp32 = machine.unit("tensor"), machine.unit("fp32")
    assert tensor is not None and fp32 is not None
    assert tensor.peaks["bf16"].clock_hz == pytest.approx(tensor_mhz * 1e6)
    assert tensor.peaks["fp64"].clock_hz == pytest.approx(sm_mhz * 1e6)
    assert fp32.peaks["fp32"].clock_hz == pytest.approx(sm_mhz * 1e6)
    # At the SM boost clock FP32 is the datasheet figure, unscaled.
    fp32_roof = fp32.peaks["fp32"]
    assert fp32_roof.value() * fp32_roof.clock_factor(sm_mhz * 1e6) == pytest.approx(
        fp32_tflops * 1e12
    )


def test_the_per_gcd_mi250x_has_half_of_every_package_roof():
    # AMD CDNA2 white paper: the package is two GCDs of 110 CUs; a kernel runs on one.
    package, gcd = _latest("mi250x"), _latest("mi250x-gcd")
    for unit in package.compute:
        one = gcd.unit(unit.id)
        assert one is not None
        for precision, roof in unit.peaks.items():
            assert one.peaks[precision].datasheet == pytest.approx(roof.datasheet / 2)
        for ceiling, half in zip(unit.ceilings, one.ceilings, strict=True):
            assert half.value.datasheet == pytest.approx(ceiling.value.datasheet / 2)
    for level in package.memory:
        one_level = gcd.level(level.id)
        assert one_level is not None
        assert one_level.bandwidth.datasheet == pytest.approx(level.bandwidth.datasheet / 2)
        assert one_level.capacity_b == pytest.approx(level.capacity_b / 2)  # type: ignore[operator]
    assert "both GCDs" in package.name and "one GCD" in gcd.name


@pytest.mark.parametrize(
    ("ident", "packed", "unpacked"),
    # CDNA2 white paper: FP32 vector 47.9 (unpacked) for MI250X, packed 2x (ROCm
    # mi250.md: 256 FLOP/clk/CU); CDNA3 white paper: FP32 vector 163.4, the packed
    # rate, unpacked at the FP64 vector rate 81.7 (304 x 128 x 2.1 GHz).
    [("mi250x", 95.7, 47.9), ("mi250x-gcd", 47.85, 23.95), ("mi300x", 163.4304, 81.7152)],
)
def test_amd_fp32_is_the_packed_peak_with_the_unpacked_ceiling(ident, packed, unpacked):
    vector = _latest(ident).unit("vector")
    assert vector is not None
    assert vector.peaks["fp32"].datasheet == pytest.approx(packed * 1e12)
    (ceiling,) = vector.ceilings
    assert ceiling.id == "fp32-unpacked"
    assert ceiling.value.datasheet == pytest.approx(unpacked * 1e12)
