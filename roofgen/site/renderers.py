"""Chart renderer processes, started early and kept warm for one build.

vl-convert holds the GIL while it renders, and its first render in a process costs
about 0.4 s (starting its JavaScript runtime and loading Vega-Lite). A build
therefore renders charts in child processes started as soon as its check knows that
a spec changed: by the time the charts that changed are known (after the check, the
analysis and the chart specs), the renderers are warm or nearly so, and they render
while the build writes its pages. A build in which nothing changed starts none.
Each renderer takes charts only once it is warm.

A renderer is ``python -P -m roofgen.site.renderers VL_VERSION``: it imports only
vl-convert, reads one JSON line per chart on stdin (the Vega-Lite spec) and writes
one JSON line per chart on stdout (``{"svg": ...}`` or ``{"error": ...}``). It
never re-imports the caller's script (a build from a script without an
``if __name__ == "__main__"`` guard works). The parent makes the SVG byte-stable
(:func:`roofgen.charts.render.stabilise_svg_ids`), as an in-process render does.
A renderer that cannot start or dies leaves its charts to the caller, which renders
them in its own process.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_WARM_UP = {
    "data": {"values": [{"x": 1, "y": 1}]},
    "mark": "point",
    "encoding": {"x": {"field": "x", "type": "quantitative"}},
}


class RendererError(RuntimeError):
    """vl-convert could not render a chart (a bug in a chart spec, not a lost process)."""


@dataclass
class _Renderer:
    proc: subprocess.Popen[bytes]
    ready: bool = False  # it has said it is warm

    def ask(self, spec: dict[str, Any] | None) -> dict[str, Any] | None:
        """Send ``spec`` (None: nothing) and read the reply; None if the process is lost."""
        stdin, stdout = self.proc.stdin, self.proc.stdout
        assert stdin is not None and stdout is not None
        try:
            if spec is not None:
                stdin.write(json.dumps(spec, ensure_ascii=False).encode() + b"\n")
                stdin.flush()
            line = stdout.readline()
        except (OSError, ValueError):  # a closed pipe
            return None
        try:
            reply = json.loads(line) if line else None
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


class Renderers:
    """Up to ``count`` renderer processes, started by :meth:`warm` or :meth:`render`."""

    def __init__(self, count: int, vl_version: str) -> None:
        self.count = max(0, count)
        self.vl_version = vl_version
        self._procs: list[_Renderer] = []

    def warm(self) -> None:
        """Start two renderers (at most ``count``) now, to be warm when charts come."""
        while len(self._procs) < min(self.count, 2) and self._start():
            pass

    def _start(self) -> bool:
        if not sys.executable:
            return False
        env = dict(os.environ)
        # The renderer imports this roofgen: where it is not on the path a child gets
        # anyway (run from a checkout, say), name its folder. Never an installed
        # roofgen's site-packages: on PYTHONPATH it would come before the stdlib.
        package_parent = str(Path(__file__).resolve().parents[2])
        if package_parent not in sys.path[1:]:
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (package_parent, os.environ.get("PYTHONPATH")) if p
            )
        try:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "roofgen.site.renderers", self.vl_version],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return False
        self._procs.append(_Renderer(proc))
        return True

    def render(self, specs: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str | None]]:
        """Start rendering ``specs`` now; the iterator gives ``(digest, raw SVG)`` for
        each, in the order they finish, while the caller may do other work first.

        ``None`` for a spec no renderer could render (the caller renders it itself).
        The iterator raises :class:`RendererError` when vl-convert rejects a spec.
        """
        if not specs:
            return iter(())
        for lost in [r for r in self._procs if r.proc.poll() is not None]:
            lost.stop()
            self._procs.remove(lost)
        # A renderer starting now is ready in about the time three charts take.
        wanted = self.count if len(specs) > 3 else min(self.count, 2)
        while len(self._procs) < wanted and self._start():
            pass
        todo: queue.SimpleQueue[tuple[str, dict[str, Any]]] = queue.SimpleQueue()
        for item in specs.items():
            todo.put(item)
        done: queue.SimpleQueue[tuple[str, str | None, str | None] | None] = queue.SimpleQueue()
        stop = threading.Event()
        threads = [
            threading.Thread(target=_feed, args=(renderer, todo, done, stop), daemon=True)
            for renderer in self._procs
        ]
        for thread in threads:
            thread.start()
        return _results(todo, done, stop, len(threads))

    def close(self) -> None:
        """Stop every renderer; they hold nothing worth waiting for."""
        for renderer in self._procs:
            renderer.stop()
        self._procs.clear()

    def __enter__(self) -> Renderers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _get(todo: queue.SimpleQueue[tuple[str, dict[str, Any]]]) -> tuple[str, dict[str, Any]] | None:
    try:
        return todo.get_nowait()
    except queue.Empty:
        return None


def _results(
    todo: queue.SimpleQueue[tuple[str, dict[str, Any]]],
    done: queue.SimpleQueue[tuple[str, str | None, str | None] | None],
    stop: threading.Event,
    running: int,
) -> Iterator[tuple[str, str | None]]:
    try:
        while running:
            message = done.get()
            if message is None:  # a renderer has nothing more to do, or is lost
                running -= 1
                continue
            digest, svg, error = message
            if error is not None:
                raise RendererError(f"cannot render chart {digest}: {error}")
            yield digest, svg
    finally:
        stop.set()
    while (left := _get(todo)) is not None:  # left when every renderer was lost
        yield left[0], None


def _feed(
    renderer: _Renderer,
    todo: queue.SimpleQueue[tuple[str, dict[str, Any]]],
    done: queue.SimpleQueue[tuple[str, str | None, str | None] | None],
    stop: threading.Event,
) -> None:
    """Send specs to ``renderer`` one at a time; a lost renderer hands its chart back."""
    try:
        if not renderer.ready:  # wait until warm; meanwhile the other renderers take charts
            renderer.ready = renderer.ask(None) == {"ready": True}
            if not renderer.ready:
                return
        while not stop.is_set() and (item := _get(todo)) is not None:
            digest, spec = item
            reply = renderer.ask(spec)
            if reply is None:  # the process is gone: its chart goes back to the caller
                done.put((digest, None, None))
                return
            done.put((digest, reply.get("svg"), reply.get("error")))
    finally:
        done.put(None)


def main(argv: list[str]) -> int:
    """The renderer process: one spec per line in, one reply per line out."""
    import vl_convert as vlc

    (vl_version,) = argv
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints cannot break replies
    vlc.vegalite_to_svg(_WARM_UP, vl_version=vl_version, allowed_base_urls=[])
    out.write(b'{"ready": true}\n')
    out.flush()
    for line in sys.stdin.buffer:
        try:
            svg = vlc.vegalite_to_svg(json.loads(line), vl_version=vl_version, allowed_base_urls=[])
            reply: dict[str, str] = {"svg": svg}
        except Exception as exc:  # reported to the parent, which stops the build
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
