"""The path a request takes through graphmend's modules (issue 51): `graphmend check` of a file with
a recorded run, and the language server's analysis of a changed document with a run (what its
worker runs on didChange). Every call from one graphmend module into another is an edge; the
report lists the calls into and out of the modules that read and merge runs, and those of them
that climb: a callee in a layer above its caller's (CONTRIBUTING's map), or a module entered again
while it is already below on the stack (a call back up the path).

    python benchmarks/module_path.py            # this checkout
    PYTHONPATH=/other/tree/server python benchmarks/module_path.py   # another version
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "tests" / "fixtures" / "GM501" / "helper_passed_to_compiled.py"
RUN_MODULES = ("graphmend.recorded", "graphmend.record.newest", "graphmend.record.runs")


def layers() -> dict[str, int]:
    """CONTRIBUTING's map: each top-level module or package of graphmend → its layer."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split("## The map", 1)[1].split("\n## ", 1)[0]
    found = {}
    for number, line in re.findall(r"^(\d+)\. (.+)$", text, re.M):
        for name in re.findall(r"`([\w]+)/?`", line):
            found[name] = int(number)
    found["run"] = found.get("pipelines", 8)  # the pipelines' module before issue 51 named it
    return found


class Tracer:
    """Module-to-module calls while `target` runs."""

    def __init__(self) -> None:
        self.edges: Counter[tuple[str, str]] = Counter()
        self.reentered: Counter[tuple[str, str]] = Counter()
        self.analyses = 0  # texts the checker analysed (`checker._check`)
        self._stack: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        module = str(frame.f_globals.get("__name__", ""))
        if event == "call":
            if module == "graphmend.checker" and frame.f_code.co_name == "_check":
                self.analyses += 1
            caller = self._stack[-1] if self._stack else ""
            if module.startswith("graphmend") and caller.startswith("graphmend") and module != caller:
                self.edges[(caller, module)] += 1
                if module in self._stack:
                    self.reentered[(caller, module)] += 1
            self._stack.append(module)
        elif event == "return" and self._stack:
            self._stack.pop()


def traced(target: Any) -> Tracer:
    tracer = Tracer()
    sys.setprofile(tracer)
    try:
        target()
    finally:
        sys.setprofile(None)
    return tracer


def report(name: str, tracer: Tracer) -> None:
    layer = layers()

    def of(module: str) -> int:
        parts = module.split(".")
        return layer.get(parts[1] if len(parts) > 1 else "", 0)

    into = {m: sum(n for (a, b), n in tracer.edges.items() if b == m) for m in RUN_MODULES}
    callers = {m: sorted({a for (a, b) in tracer.edges if b == m}) for m in RUN_MODULES}
    touching = {edge: n for edge, n in tracer.edges.items() if set(edge) & set(RUN_MODULES)}
    climbing = {edge: n for edge, n in touching.items() if of(edge[1]) > of(edge[0])}
    reentered = {edge: n for edge, n in tracer.reentered.items() if edge in touching}
    print(f"## {name}")
    print(f"- analyses of a text (checker._check): {tracer.analyses}")
    for module in RUN_MODULES:
        if into[module]:
            print(f"- calls into {module}: {into[module]}, from {', '.join(callers[module])}")
    print(f"- calls between a run module and another: {sum(touching.values())}")
    for (a, b), n in sorted(touching.items()):
        print(f"    {a} -> {b}: {n}")
    print(f"- of them, calls to a module in a higher layer: {sum(climbing.values())}")
    for (a, b), n in sorted(climbing.items()):
        print(f"    {a} (layer {of(a)}) -> {b} (layer {of(b)}): {n}")
    print(f"- of them, calls back into a module already on the stack: {sum(reentered.values())}")
    for (a, b), n in sorted(reentered.items()):
        print(f"    {a} -> {b}: {n}")


def main() -> int:
    import graphmend.api as api
    from graphmend.cli import main as cli
    from graphmend.lsp.worker import analyse

    folder = Path(tempfile.mkdtemp())
    try:
        sys.path.insert(0, str(ROOT / "tests"))
        from conftest import with_recorded_run

        path = with_recorded_run(CASE, folder)
        text = path.read_text(encoding="utf-8")
        report(
            "graphmend check FILE (a run met the file)", traced(lambda: cli(["check", "--no-cache", "-q", str(path)]))
        )
        settings = api.Settings()
        report(
            "the editor's analysis of a changed document (a run met the file)",
            traced(lambda: analyse(text + "\n# edited\n", 2, path, settings)),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
