"""The Guide's Python page (templates/guide/python.md): every code block runs, in
order, in one namespace, in a copy of the specs, and prints exactly the output the
page shows under it."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "templates" / "guide" / "python.md"
BLOCK = re.compile(r"```python\n(.*?)```\n\n```text\n(.*?)```", re.DOTALL)


def blocks(text: str) -> list[tuple[str, str]]:
    """(code, shown output) of each Python block followed by a text block."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def run_blocks(code_blocks: list[str], folder: Path) -> list[str]:
    """Run the blocks in ``folder`` (a copy of the specs in it); return each output."""
    shutil.copytree(ROOT / "specs", folder / "specs")
    namespace: dict[str, object] = {"__name__": "__guide__"}
    outputs = []
    with contextlib.chdir(folder):
        for code in code_blocks:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, str(PAGE), "exec"), namespace)  # noqa: S102
            outputs.append(out.getvalue())
    return outputs


def test_the_page_is_in_the_guide() -> None:
    from roofgen.site.guide import GUIDE_NAV, PYTHON_PATH, guide_pages

    assert PYTHON_PATH in {path for _, path in GUIDE_NAV}
    assert "roofgen.load" in guide_pages("")[PYTHON_PATH]


def test_every_block_prints_what_the_page_shows(tmp_path: Path) -> None:
    found = blocks(PAGE.read_text(encoding="utf-8"))
    assert len(found) >= 5
    assert PAGE.read_text(encoding="utf-8").count("```python") == len(found)
    outputs = run_blocks([code for code, _ in found], tmp_path)
    for (code, shown), got in zip(found, outputs, strict=True):
        assert got == shown, f"the block\n{code}\nnow prints\n{got}"


if __name__ == "__main__":  # refresh the outputs on the page: python tests/test_notebook_page.py
    import tempfile

    text = PAGE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        outputs = iter(run_blocks([code for code, _ in blocks(text)], Path(tmp)))
    text = BLOCK.sub(lambda m: f"```python\n{m.group(1)}```\n\n```text\n{next(outputs)}```", text)
    PAGE.write_text(text, encoding="utf-8")
