"""What Dynamo does with a graph break inside a called function (a nested graph break), by depth.

    python benchmarks/nested_breaks.py

The same break (a `print` between tensor operations, or a data-dependent `if`), and graphmend's two
rewrites of the print (deferred through a reorderable helper; `torch._higher_order_ops.print`), placed in the
compiled function itself (depth 0), in a function it calls (depth 1), or two calls down (depth 2),
in the same file or another module (the break site is what matters, not the file). For each:
compiled graphs (`torch._dynamo.utils.counters["stats"]["unique_graphs"]`), the sites the
graph_breaks log names, and whether the outputs and the printed text equal eager's. torch 2.13.0,
backend="eager".
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))

import dynamo_harness  # noqa: E402
import torch  # noqa: E402

BREAKS = {
    "print": "    x = x + 1\n    print('value', x)\n    x = x * 3\n",
    "data-dependent if": "    x = x + 1\n    if x.sum() > 0:\n        x = x * 3\n    x = x - 1\n",
    # graphmend's two rewrites of a print: deferral (a reorderable helper) and the in-graph print
    "deferred print": "    x = x + 1\n    _deferred_print('value', x)\n    x = x * 3\n",
    "in-graph print": "    x = x + 1\n    torch._higher_order_ops.print('value {!s}', x)\n    x = x * 3\n",
}

PRELUDE = """import torch


@torch.compiler.disable
def _deferred_print(*values):
    print(*values)


torch.compiler.config.reorderable_logging_functions.add(_deferred_print)
"""


def program(depth: int, body: str) -> str:
    """f0 is compiled; f0 calls f1 ... f{depth}, which holds the break."""
    functions = []
    for level in range(depth, -1, -1):
        if level == depth:
            functions.append(f"def f{level}(x):\n    x = x * 2\n{body}    return x\n")
        else:
            functions.append(f"def f{level}(x):\n    x = x - 2\n    x = f{level + 1}(x)\n    return x + 5\n")
    return (
        PRELUDE
        + "\n\n"
        + "\n\n".join(functions)
        + ("\n\nENTRY = torch.compile(f0, backend='eager')\nINPUTS = [(torch.ones(3),), (-torch.ones(3),)]\n")
    )


def main() -> None:
    print(
        "| break | depth | graphs | break sites logged (function) | outputs equal eager | printed text equals eager |"
    )
    print("|---|---:|---:|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, body in BREAKS.items():
            for depth in range(3):
                path = pathlib.Path(folder, f"nested_{depth}_{name.split()[0]}.py")
                text = program(depth, body)
                path.write_text(text)
                breaks, graphs = dynamo_harness.measure(path)
                lines = text.splitlines()
                owners = []
                for b in sorted(breaks, key=lambda b: b.line):
                    owner = next(
                        line.split("(")[0][4:] for line in reversed(lines[: b.line]) if line.startswith("def ")
                    )
                    owners.append(f"line {b.line} ({owner})")
                spec = importlib.util.spec_from_file_location(path.stem, path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                eager = module.ENTRY._torchdynamo_orig_callable
                with dynamo_harness._silenced() as (compiled_out, _):
                    compiled = [module.ENTRY(*a) for a in module.INPUTS]
                with dynamo_harness._silenced() as (eager_out, _):
                    expected = [eager(*a) for a in module.INPUTS]
                equal = all(map(torch.equal, compiled, expected))
                printed = compiled_out.getvalue() == eager_out.getvalue()
                torch._dynamo.reset()
                print(f"| {name} | {depth} | {graphs} | {', '.join(owners) or 'none'} | {equal} | {printed} |")


if __name__ == "__main__":
    main()
