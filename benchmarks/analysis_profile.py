"""Where analysis time goes, stage by stage, on one file (median of repeated runs, no profiler).

python benchmarks/analysis_profile.py [FILE]   (default: transformers 4.49.0's modeling_longformer.py)
"""

from __future__ import annotations

import ast
import statistics
import sys
import time
from pathlib import Path

import libcst

from graphmend.api import check_source, read_source
from graphmend.checker import _Collector
from graphmend.fixes.base import FixContext
from graphmend.inference import FunctionAnalysis, ModuleAnalysis
from graphmend.regions import CompiledRegions
from graphmend.rules import RULES
from graphmend.semantics import ModuleIndex, module_name_for
from graphmend.settings import Settings
from graphmend.source import SourceText


def stages(text: str, path: Path) -> dict[str, float]:
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def mark(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[name] = now - clock
        clock = now

    tree = ast.parse(text)
    mark("ast.parse")
    index = ModuleIndex(tree, module_name_for(path))
    mark("names and scopes (ModuleIndex)")
    regions = CompiledRegions(index)
    mark("compiled regions and call graph")
    module = ModuleAnalysis(index, regions)
    source = SourceText(text)
    rules = [rule() for rule in RULES]
    detect = _Collector(source, rules, FixContext(source, index), Settings())
    detect._fix = lambda *args: None  # type: ignore[method-assign]  # detection only
    for reach in regions.reached.values():
        detect.reach = reach
        FunctionAnalysis(module, reach.chain[-1], visitor=detect).run()
    mark("value kinds and rules (detection)")
    check_source(text, path, Settings())
    times["whole check_source (detection + fixes)"] = time.perf_counter() - clock
    return times


def main() -> int:
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
    else:
        import transformers

        path = Path(transformers.__file__).parent / "models/longformer/modeling_longformer.py"
    text = read_source(path)
    runs = [stages(text, path) for _ in range(9)]
    parse = statistics.median(_timed(libcst.parse_module, text) for _ in range(5))
    print(f"{path.name}: median of {len(runs)} runs, ms")
    for name in runs[0]:
        print(f"  {name:<42} {statistics.median(r[name] for r in runs) * 1000:7.1f}")
    print(f"  {'(libcst.parse_module, for scale)':<42} {parse * 1000:7.1f}")
    return 0


def _timed(function, *args) -> float:  # noqa: ANN001
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
