"""`torch.cond` against `torch.where` for a branch that runs a whole layer (issue 16, item 3).

    python benchmarks/gate_cost.py [--pairs 3] [--calls 30] [--hidden 256] [--layers 4]

Two programs, each in three forms, each form in a fresh process with an empty inductor cache,
forms alternated `--pairs` times:

- `gate`: an encoder whose loop skips a layer with LayerDrop (`if self.training: p = torch.rand([]);
  if p < self.layerdrop: continue`), trained (forward + backward) with layerdrop 0.5 and 0.1.
  `original` is the code as written (Dynamo breaks in the loop and runs the frame eagerly),
  `where` what `graphmend fix --unsafe-fixes` writes for it by default (the layer always runs,
  `torch.where` keeps the old state for a skipped layer), `cond` what it writes with
  `layer-skip = "cond"` (only a kept layer runs); both made by graphmend when the script runs.
  Eval mode is measured too: there the gate is None and every form runs every layer.
- `branch`: a plain `if h.abs().amax() > t: h = self.block(h)` in eval, taken on half the calls:
  `original`, `where` (what graphmend writes) and `cond` (written by hand), to see whether an
  expensive non-loop branch would pay for `torch.cond`.

Steady state: median ms of `--calls` calls after 5 warm-up calls; first call: compile included.
CPU unless a GPU is visible (then also `mode="reduce-overhead"`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

GATE = """import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, 4 * hidden)
        self.down = nn.Linear(4 * hidden, hidden)
        self.dropout = nn.Dropout(0.1)

    def forward(self, h):
        return h + self.dropout(self.down(torch.nn.functional.gelu(self.up(self.norm(h)))))


class Encoder(nn.Module):
    def __init__(self, hidden, layers, layerdrop):
        super().__init__()
        self.layers = nn.ModuleList(Layer(hidden) for _ in range(layers))
        self.layerdrop = layerdrop

    def forward(self, h):
        for layer in self.layers:
            if self.training:
                p = torch.rand([])
                if p < self.layerdrop:
                    continue
            h = layer(h)
        return h
"""

BRANCH = """import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.up = nn.Linear(hidden, 4 * hidden)
        self.down = nn.Linear(4 * hidden, hidden)

    def forward(self, h):
        return h + self.down(torch.nn.functional.gelu(self.up(h)))


class Model(nn.Module):
    def __init__(self, hidden, layers, layerdrop):
        super().__init__()
        self.inp = nn.Linear(hidden, hidden)
        self.first = Block(hidden)
        self.blocks = nn.ModuleList(Block(hidden) for _ in range(layers - 1))

    def forward(self, h):
        h = self.inp(h)
        if h.abs().amax() > 3.0:
            h = self.first(h)
        for block in self.blocks:
            h = block(h)
        return h
"""

BRANCH_WHERE = BRANCH.replace(
    """        if h.abs().amax() > 3.0:
            h = self.first(h)
""",
    """        cond = h.abs().amax() > 3.0
        h_if = self.first(h)
        h = torch.where(cond, h_if, h)
""",
)

BRANCH_COND = BRANCH.replace(
    """        if h.abs().amax() > 3.0:
            h = self.first(h)
""",
    """        h = torch.cond(h.abs().amax() > 3.0, lambda h: self.first(h), lambda h: h.clone(), (h,))
""",
)

WORKER = r"""
import importlib.util, json, statistics, sys, time
import torch
path, train, hidden, layers, layerdrop, calls, mode = sys.argv[1], sys.argv[2] == "train", int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), sys.argv[7]
spec = importlib.util.spec_from_file_location("program", path)
program = importlib.util.module_from_spec(spec)
spec.loader.exec_module(program)
device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model_class = getattr(program, "Encoder", None) or program.Model
model = model_class(hidden, layers, layerdrop).to(device).train(train)
compiled = torch.compile(model, mode=None if mode == "default" else mode)
small = torch.randn(1, 128, hidden, device=device) * 0.1  # the plain branch: not taken
large = small * 100.0                                       # taken
inputs = [small.requires_grad_(train), large.detach().requires_grad_(train)]
def call(i):
    with torch.set_grad_enabled(train):
        out = compiled(inputs[i % 2])
        if train:
            out.sum().backward()
    if device == "cuda":
        torch.cuda.synchronize()
start = time.perf_counter(); call(0); call(1); first = time.perf_counter() - start
for i in range(5):
    call(i)
times = []
for i in range(calls):
    start = time.perf_counter(); call(i); times.append(time.perf_counter() - start)
from torch._dynamo.utils import counters
print(json.dumps({"first": first, "steady": statistics.median(times), "graphs": counters["stats"]["unique_graphs"]}))
"""


def measure(path: Path, train: bool, args: argparse.Namespace, layerdrop: float, mode: str) -> dict:
    """One form in a fresh process with an empty inductor cache."""
    with tempfile.TemporaryDirectory(prefix="inductor-cache-") as cache:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                WORKER,
                str(path),
                "train" if train else "eval",
                str(args.hidden),
                str(args.layers),
                str(layerdrop),
                str(args.calls),
                mode,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def graphmend_fix(text: str, folder: Path, layer_skip: str = "where") -> str:
    """`graphmend fix --unsafe-fixes` of `text` with the `layer-skip` setting given."""
    from graphmend.api import fix_source
    from graphmend.settings import Settings

    return fix_source(text, folder / "program.py", Settings(layer_skip=layer_skip), unsafe=True).fixed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    args = parser.parse_args()
    import torch

    modes = ["default"] + (["reduce-overhead"] if torch.cuda.is_available() else [])
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
    print(
        f"torch {torch.__version__}, {device}, hidden {args.hidden}, {args.layers} layers, seq 128, "
        f"{args.calls} steady calls, {args.pairs} alternated process rounds\n"
    )
    print("| program | mode | forms | first call s | steady ms | steady / original |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        gate_where, gate_cond = graphmend_fix(GATE, folder), graphmend_fix(GATE, folder, layer_skip="cond")
        if "torch.where(" not in gate_where or "torch.cond(" not in gate_cond:
            raise SystemExit("graphmend did not write the torch.where and torch.cond forms of the gate")
        programs = {
            "gate": {"original": GATE, "where": gate_where, "cond": gate_cond},
            "branch": {"original": BRANCH, "where": BRANCH_WHERE, "cond": BRANCH_COND},
        }
        if graphmend_fix(BRANCH, folder) != BRANCH_WHERE:
            raise SystemExit("graphmend's fix of the plain branch is not the `where` form measured here")
        scenarios = [("gate", True, 0.5), ("gate", True, 0.1), ("gate", False, 0.5), ("branch", False, 0.0)]
        for mode in modes:
            for program, train, layerdrop in scenarios:
                paths = {}
                for form, text in programs[program].items():
                    paths[form] = folder / f"{program}_{form}.py"
                    paths[form].write_text(text)
                runs: dict[str, list[dict]] = {form: [] for form in paths}
                for _ in range(args.pairs):
                    for form, path in paths.items():
                        runs[form].append(measure(path, train, args, layerdrop, mode))
                label = f"{program}, {'train' if train else 'eval'}" + (
                    f", layerdrop {layerdrop}" if program == "gate" else ""
                )
                base = statistics.median(r["steady"] for r in runs["original"])
                cells = []
                for form, records in runs.items():
                    steady = [r["steady"] for r in records]
                    ratios = [s / base for s in steady]
                    cells.append(
                        (
                            form,
                            statistics.median(r["first"] for r in records),
                            statistics.median(steady) * 1e3,
                            f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})",
                        )
                    )
                print(
                    f"| {label} | {mode} | "
                    + " / ".join(c[0] for c in cells)
                    + " | "
                    + " / ".join(f"{c[1]:.1f}" for c in cells)
                    + " | "
                    + " / ".join(f"{c[2]:.2f}" for c in cells)
                    + " | "
                    + " / ".join(c[3] for c in cells)
                    + " |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
