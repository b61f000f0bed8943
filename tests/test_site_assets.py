"""roofgen's own scripts are files under templates/assets/, copied into the site as they are."""

from __future__ import annotations

from pathlib import Path

from roofgen.datafiles import data_dir
from roofgen.site.assets import CHARTS_BOOT_PATH, IFRAME_WORKER_PATH, write_iframe_worker

ASSETS = data_dir("templates") / "assets"


def test_the_worker_stand_in_is_copied_byte_for_byte(tmp_path: Path) -> None:
    written = write_iframe_worker(tmp_path)
    assert written == "assets/javascripts/roofgen-iframe-worker.js"
    source = (ASSETS / "roofgen-iframe-worker.js").read_bytes()
    assert (tmp_path / written).read_bytes() == source
    assert source.startswith(b"/* roofgen iframe worker (classic script).")


def test_every_own_script_is_a_classic_script_file() -> None:
    """Classic scripts (no import/export: module scripts do not run from file://), plain
    ASCII with Unix line ends, so that the site's bytes do not depend on the checkout."""
    for site_path in (CHARTS_BOOT_PATH, IFRAME_WORKER_PATH):
        data = (ASSETS / Path(site_path).name).read_bytes()
        text = data.decode("ascii")
        assert b"\r" not in data and text.endswith("})();\n")
        lines = text.splitlines()
        assert not [line for line in lines if line.startswith(("import ", "export "))]
