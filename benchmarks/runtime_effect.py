"""Runtime effect of graphmend's rewrites under torch.compile (inductor), broken vs fixed.

    python benchmarks/runtime_effect.py [--calls 40] [--skip-phi3]

For the paper's Figure 1 and Figure 5 functions and a tiny Phi-3 longrope model: first-call latency
(compilation included, cold: every process gets an empty inductor cache) and steady-state latency (median of --calls calls after warm-up), for the
original code and for `graphmend fix --unsafe-fixes` of it, each measured in a fresh process with the
default inductor backend. Ratios are fixed / broken (goal: steady state <= 0.9). CPU unless a GPU is
visible (then `mode="reduce-overhead"` as well).
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

FUNCTION_WORKER = r"""
import contextlib, io, json, sys, time, importlib.util
import torch
path, entry, calls, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
spec = importlib.util.spec_from_file_location("program", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
function = getattr(module, entry)
function = getattr(function, "_torchdynamo_orig_callable", function)
device = "cuda" if torch.cuda.is_available() else "cpu"
compiled = torch.compile(function, mode=None if mode == "default" else mode)
torch.manual_seed(0)
size = 4096
inputs = [(torch.full((size,), 1.0, device=device), torch.randn(size, device=device)),
          (torch.full((size,), -1.0, device=device), torch.randn(size, device=device))]
arity = function.__code__.co_argcount
def call(args):
    with contextlib.redirect_stdout(io.StringIO()):
        out = compiled(*args[:arity])
    if device == "cuda":
        torch.cuda.synchronize()
    return out
start = time.perf_counter(); call(inputs[0]); call(inputs[1]); first = time.perf_counter() - start
for _ in range(5):
    call(inputs[0]); call(inputs[1])
times = []
for i in range(calls):
    args = inputs[i % 2]
    start = time.perf_counter(); call(args); times.append(time.perf_counter() - start)
json.dump({"first": first, "steady": sorted(times)[len(times) // 2]}, sys.stdout)
"""


PHI3_WORKER = r"""
import json, sys, time
import torch, transformers
calls, mode = int(sys.argv[1]), sys.argv[2]
transformers.logging.set_verbosity_error()
torch.manual_seed(0)
config = transformers.Phi3Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                 num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                                 original_max_position_embeddings=4, pad_token_id=0,
                                 rope_scaling={"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4})
device = "cuda" if torch.cuda.is_available() else "cpu"
model = transformers.Phi3ForCausalLM(config).eval().to(device)
compiled = torch.compile(model, mode=None if mode == "default" else mode)
ids = torch.randint(1, 32, (1, 8), device=device)
def call():
    with torch.no_grad():
        out = compiled(input_ids=ids).logits
    if device == "cuda":
        torch.cuda.synchronize()
    return out
start = time.perf_counter(); call(); first = time.perf_counter() - start
for _ in range(5):
    call()
times = []
for _ in range(calls):
    start = time.perf_counter(); call(); times.append(time.perf_counter() - start)
print(json.dumps({"first": first, "steady": sorted(times)[len(times) // 2]}))
"""


def fixed_transformers(folder: Path) -> Path:
    """A copy of the installed transformers with `graphmend fix --unsafe-fixes` applied to Phi-3."""
    import shutil

    import transformers

    site = folder / "site"
    shutil.copytree(
        Path(transformers.__file__).parent, site / "transformers", ignore=shutil.ignore_patterns("__pycache__")
    )
    target = site / "transformers" / "models" / "phi3" / "modeling_phi3.py"
    subprocess.run(
        [sys.executable, "-m", "graphmend", "fix", "--unsafe-fixes", str(target)], check=False, capture_output=True
    )
    return site


def run_worker(code: str, *args: str, env: dict | None = None) -> dict:
    """One measurement in a fresh process with an empty inductor cache (a true cold start)."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(code)
    with tempfile.TemporaryDirectory(prefix="inductor-cache-") as cache:
        environment = {**(env or os.environ), "TORCHINDUCTOR_CACHE_DIR": cache, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
        result = subprocess.run([sys.executable, handle.name, *args], capture_output=True, text=True, env=environment)
    os.unlink(handle.name)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def fixed_copy(path: Path, folder: Path) -> Path:
    from graphmend.api import fix_source

    target = folder / f"{path.stem}_fixed.py"
    target.write_text(fix_source(path.read_text(), path, unsafe=True).fixed)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3, help="processes per variant (medians are reported)")
    parser.add_argument("--skip-phi3", action="store_true", help="only the paper's two functions")
    args = parser.parse_args()
    import torch

    modes = ["default"] + (["reduce-overhead"] if torch.cuda.is_available() else [])
    device = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
    print(
        f"torch {torch.__version__}, {device}, inductor, {args.calls} steady calls, {args.repeats} processes per variant"
    )
    print(
        f"{'program':<18} {'mode':<16} {'first broken s':>15} {'first fixed s':>14} {'ratio':>6} "
        f"{'steady broken ms':>17} {'steady fixed ms':>16} {'ratio':>6}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name, entry in (("figure1", "f"), ("figure5", "fn")):
            original = ROOT / "examples" / f"{name}.py"
            fixed = fixed_copy(original, Path(folder))
            for mode in modes:
                rows: dict[str, list[float]] = {"broken": [], "fixed": []}
                for _ in range(args.repeats):  # alternate the variants so noise hits both
                    for variant, path in (("broken", original), ("fixed", fixed)):
                        rows[variant].append(run_worker(FUNCTION_WORKER, str(path), entry, str(args.calls), mode))
                _row(name, mode, rows)
        if not args.skip_phi3:
            site = fixed_transformers(Path(folder))
            fixed_env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
            for mode in modes:
                rows = {"broken": [], "fixed": []}
                for _ in range(args.repeats):
                    rows["broken"].append(run_worker(PHI3_WORKER, str(args.calls), mode))
                    rows["fixed"].append(run_worker(PHI3_WORKER, str(args.calls), mode, env=fixed_env))
                _row("phi3-tiny seq 8", mode, rows)
    return 0


def _row(name: str, mode: str, rows: dict[str, list[dict]]) -> None:
    first = {k: statistics.median(r["first"] for r in v) for k, v in rows.items()}
    steady = {k: statistics.median(r["steady"] for r in v) for k, v in rows.items()}
    print(
        f"{name:<18} {mode:<16} {first['broken']:>15.2f} {first['fixed']:>14.2f} "
        f"{first['fixed'] / first['broken']:>6.2f} {steady['broken'] * 1000:>17.3f} "
        f"{steady['fixed'] * 1000:>16.3f} {steady['fixed'] / steady['broken']:>6.2f}",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
