"""Ground truth for the GM4xx rules: CUDA-graph skips, outputs and steady-state time before and after the fix.

    python benchmarks/cudagraph_proof.py [--cases A,B] [--pairs 3] [--calls 200] [--work DIR] [--json OUT]

Cases: a GM4xx rewrite fixture per rule (`tests/fixtures/GM40x/fix_*.in.py` against its `.out.py`, the
user-style programs; GM401's 0-d scale and a table of several values moved by hand with `.to(x.device)`
(one not moved fails in eager mode on a GPU), and GM405's step counter, which cannot overflow in the timed calls) and real model code of the installed transformers with GM4xx findings
(Splinter's question answering with labels: GM403 after a squeeze; VITS's spline flow: GM402; TVP's
down-pad frame prompter: GM403; Phi-MoE's block in training: GM403 on its input jitter, run only when `input_jitter_noise > 0`), plus a control
with no finding (BioGPT). The model
files are fixed in a copy of the package (`graphmend fix --unsafe-fixes --select GM4 --cuda-graphs
always`), imported through PYTHONPATH.

For each case, `--pairs` pairs of fresh processes (original, fixed, alternated; each with an empty
inductor cache) compile the program with `torch.compile(mode="reduce-overhead")` on the GPU, run
3 warm-up calls, read `counters["inductor"]["cudagraph_skips"]`, time `--calls` calls (median, each
call synchronised) and save the outputs. The table gives skips before -> after, outputs equal (the
fixed program's eager and compiled outputs against the original's, NaN equal to NaN; bit for bit on
the CPU, within `CUDA_FP32_TOLERANCE` on a GPU, where the control itself differs between processes
by reduction order; the largest difference is shown; each process makes the same calls in the same
order, so stateful programs compare too), steady ms and the fixed/original ratio per pair (median
and spread), the control's spread beside them; then the skip reasons inductor logged. Set
GRAPHMEND_TIMING_LOCK to a file path to run this beside `gpu_effect.py`: compilations overlap,
timed calls never do.

Without a GPU the same processes compile with `backend="eager"` and report graphs and outputs only
(CUDA graphs exist only on a GPU): what the CPU can prove, the tests prove too.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch._dynamo.utils
import transformers
from harness import (
    close_on_gpu,
    collect_cudagraph_skips,
    empty_inductor_cache,
    exit_unless_imported_from,
    identical,
    max_difference,
    run_worker,
    same,
    timing_lock,
    worker_env,
)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
WARMUP = 3
Program = tuple[Callable[..., Any], tuple[Any, ...]]


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"case_{path.stem.replace('.', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Dynamo imports the module of a traced lambda by name
    spec.loader.exec_module(module)
    return module


def _original(fn: Any) -> Any:
    return getattr(fn, "_torchdynamo_orig_callable", fn)


# ---------------------------------------------------------------- the programs


def _fixture(
    code: str, case: str, build: Callable[[Any, torch.device], Program]
) -> Callable[[bool, torch.device], Program]:
    def program(fixed: bool, device: torch.device) -> Program:
        return build(_load(FIXTURES / code / f"{case}.{'out' if fixed else 'in'}.py"), device)

    return program


def _scaled(module: Any, device: torch.device) -> Program:
    return module.Scaled(64).to(device), (torch.randn(32, 64, device=device),)


def _shifted(module: Any, device: torch.device) -> Program:
    return module.Shifted(64).to(device), (torch.randn(32, 64, device=device),)


def _keep_positive(module: Any, device: torch.device) -> Program:
    scores = torch.randn(32, 64, device=device)
    return _original(module.keep_positive), (scores, torch.randn(32, 64, device=device))


def _normalise(module: Any, device: torch.device) -> Program:
    return _original(module.normalise), (torch.randn(4096, device=device), torch.randn(4096, device=device), 0.5)


def _layer(module: Any, device: torch.device) -> Program:
    return _original(module.layer), (torch.randn(32, 64, device=device), torch.randn(64, 64, device=device))


def _warmup(module: Any, device: torch.device) -> Program:
    return module.Warmup().to(device), (torch.randn(64, device=device, dtype=torch.float64),)


def _ids(length: int, high: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(1, high, (1, length), generator=torch.Generator().manual_seed(seed))


def _transformers(build: Callable[[torch.device], Program]) -> Callable[[bool, torch.device], Program]:
    def program(fixed: bool, device: torch.device) -> Program:
        return build(device)

    return program


def _splinter(device: torch.device) -> Program:
    config = transformers.SplinterConfig(
        vocab_size=64,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        question_token_id=3,
    )
    model = transformers.SplinterForQuestionAnswering(config).eval().to(device)
    ids = _ids(16, 64).to(device)
    ids[0, 2] = 3
    start, end = torch.tensor([2], device=device), torch.tensor([42], device=device)
    return (lambda s, e: model(input_ids=ids, start_positions=s, end_positions=e).loss), (start, end)


def _vits(device: torch.device) -> Program:
    config = transformers.VitsConfig(
        vocab_size=32,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        ffn_dim=32,
        flow_size=16,
        spectrogram_bins=17,
        upsample_initial_channel=16,
        upsample_rates=[2, 2],
        upsample_kernel_sizes=[4, 4],
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 3]],
        use_stochastic_duration_prediction=True,
        duration_predictor_filter_channels=16,
        prior_encoder_num_flows=2,
        duration_predictor_num_flows=2,
    )
    model = transformers.VitsModel(config).eval().to(device)
    ids = _ids(8, 32).to(device)
    return (lambda: model(input_ids=ids).waveform), ()


def _tvp(device: torch.device) -> Program:
    """The down-pad prompter, whose `pixel_values *= mask` and `+= prompt` ("replace" runs both)
    change the caller's pixels (the frame pad prompter, measured first by mistake, changes none)."""
    from transformers.models.tvp.modeling_tvp import TvpFrameDownPadPrompter

    config = transformers.TvpConfig(
        visual_prompt_size=4, max_img_size=32, num_frames=2, visual_prompter_apply="replace"
    )
    config.frame_num = 2  # read by the prompter, not set by TvpConfig in 4.49.0
    prompter = TvpFrameDownPadPrompter(config).to(device)
    return prompter, (torch.randn(1, 2, 3, 32, 32, device=device),)


def _phimoe(device: torch.device) -> Program:
    config = transformers.PhimoeConfig(
        vocab_size=64,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        input_jitter_noise=0.01,
        max_position_embeddings=64,
    )
    model = transformers.PhimoeForCausalLM(config).train().to(device)
    ids = _ids(8, 64).to(device)

    def run() -> torch.Tensor:
        torch.manual_seed(0)
        return model(input_ids=ids).logits

    return run, ()


def _biogpt(device: torch.device) -> Program:
    config = transformers.BioGptConfig(
        vocab_size=64,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    model = transformers.BioGptForCausalLM(config).eval().to(device)
    ids = _ids(8, 64).to(device)
    return (lambda: model(input_ids=ids).logits), ()


@dataclass(frozen=True)
class Case:
    name: str
    program: Callable[[bool, torch.device], Program]
    family: str | None = None  # the transformers model folder whose modeling file is fixed


CONTROL = "biogpt"
CASES = {
    case.name: case
    for case in [
        Case("GM401-scalar-buffer", _fixture("GM401", "fix_scalar_buffer", _scaled)),
        Case("GM401-moved-table", _fixture("GM401", "fix_moved_table", _shifted)),
        Case("GM402-masked-where", _fixture("GM402", "fix_masked_where", _keep_positive)),
        Case("GM403-out-of-place", _fixture("GM403", "fix_out_of_place", _normalise)),
        Case("GM404-cond-select", _fixture("GM404", "fix_cond_select", _layer)),
        Case("GM405-step-counter", _fixture("GM405", "fix_step_counter", _warmup)),
        Case("splinter", _transformers(_splinter), "splinter"),
        Case("vits", _transformers(_vits), "vits"),
        Case("tvp", _transformers(_tvp), "tvp"),
        Case("phimoe-train", _transformers(_phimoe), "phimoe"),
        Case(CONTROL, _transformers(_biogpt), "biogpt"),
    ]
}


# ---------------------------------------------------------------- the worker (one process, one measurement)


def worker(name: str, variant: str, calls: int, out: Path, package: Path) -> None:
    exit_unless_imported_from(package)
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    fn, args = CASES[name].program(variant == "fixed", device)

    def fresh() -> tuple[Any, ...]:  # the caller's tensors, new for every call: a program may change them in place
        return tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)

    with torch.no_grad():
        torch.manual_seed(0)
        eager = fn(*fresh())
    skip_reasons = collect_cudagraph_skips() if cuda else []
    compiled = torch.compile(fn, mode="reduce-overhead") if cuda else torch.compile(fn, backend="eager")
    counters = torch._dynamo.utils.counters

    def call() -> Any:
        torch.manual_seed(0)
        output = compiled(*fresh())
        if cuda:
            torch.cuda.synchronize()
        return output

    grad = torch.enable_grad() if name == "phimoe-train" else torch.no_grad()
    with grad:
        output = call()  # compiles: outside the timing lock
    with grad, timing_lock():
        for _ in range(WARMUP - 1):
            output = call()
        # read now: a later replay of the same CUDA graphs overwrites the tensors it returned
        compiled_output = _tensors(output)
        times = []
        for _ in range(calls if cuda else 0):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    torch.save({"eager": _tensors(eager), "compiled": compiled_output}, f"{out}.pt")
    out.write_text(
        json.dumps(
            {
                "case": name,
                "variant": variant,
                "device": torch.cuda.get_device_name() if cuda else "cpu",
                "graphs": counters["stats"]["unique_graphs"],
                "graph_breaks": sum(counters["graph_break"].values()),
                "cudagraph_skips": counters["inductor"]["cudagraph_skips"] if cuda else None,
                "skip_reasons": sorted(set(skip_reasons)),
                "steady_median_ms": 1000 * statistics.median(times) if times else None,
            }
        )
    )


def _tensors(output: Any) -> list[torch.Tensor]:
    """A program's output as a list of CPU tensors (a tuple of results compares element by element)."""
    items = output if isinstance(output, (tuple, list)) else (output,)
    return [item.detach().cpu() for item in items]


def _difference(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max((max_difference(x, y) for x, y in zip(a, b)), default=0.0) if len(a) == len(b) else float("inf")


# ---------------------------------------------------------------- the driver


def fixed_copy(work: Path) -> Path:
    """A copy of the installed transformers whose measured model files carry the GM4xx fixes."""
    site = work / "site"
    if not (site / "transformers").exists():
        shutil.copytree(
            Path(transformers.__file__).parent, site / "transformers", ignore=shutil.ignore_patterns("__pycache__")
        )
    targets = [
        str(site / "transformers" / "models" / c.family / f"modeling_{c.family}.py") for c in CASES.values() if c.family
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmend",
            "fix",
            "--unsafe-fixes",
            "--select",
            "GM4",
            "--cuda-graphs",
            "always",
            *targets,
        ],
        capture_output=True,
        text=True,
    )
    print(done.stdout.strip() or done.stderr.strip())
    return site


def measure(name: str, variant: str, calls: int, package: Path, pythonpath: Path | None, out: Path) -> dict[str, Any]:
    with empty_inductor_cache() as cache:
        return run_worker(
            __file__,
            [name, variant, str(calls), str(out), str(package)],
            worker_env(pythonpath, **cache),
            out,
            timeout=1800,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", nargs=5, metavar=("CASE", "VARIANT", "CALLS", "OUT", "PACKAGE"))
    args = parser.parse_args()
    if args.worker:
        name, variant, calls, out, package = args.worker
        worker(name, variant, int(calls), Path(out), Path(package))
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="cudagraph-proof-"))
    work.mkdir(parents=True, exist_ok=True)
    original = Path(transformers.__file__).parent
    site = fixed_copy(work)
    cuda = torch.cuda.is_available()
    agree = close_on_gpu if cuda else identical  # bit for bit on the CPU; on a GPU up to reduction order
    print(
        f"device: {torch.cuda.get_device_name() if cuda else 'cpu (no CUDA: graphs and outputs only)'}; "
        f"torch {torch.__version__}, transformers {transformers.__version__}; {' '.join(sys.argv)}\n"
    )
    print("| case | graphs | CUDA-graph skips | outputs equal | steady ms | fixed/original (spread) |")
    print("|---|---|---|---|---|---|")
    rows, failed = [], False
    for name in args.cases.split(","):
        records: dict[str, list[dict[str, Any]]] = {"original": [], "fixed": []}
        equal, difference = True, 0.0
        for pair in range(args.pairs if cuda else 1):
            for variant in ("original", "fixed"):
                out = work / f"{name}-{variant}-{pair}.json"
                fixed_package = variant == "fixed" and CASES[name].family is not None
                record = measure(
                    name,
                    variant,
                    args.calls,
                    site / "transformers" if fixed_package else original,
                    site if fixed_package else None,
                    out,
                )
                records[variant].append(record)
                if "error" in record:
                    failed = True
                    continue
                reference = work / f"{name}-original-{pair}.json.pt"
                if not reference.exists():
                    continue  # the original failed: reported as an error below
                saved, first = torch.load(f"{out}.pt"), torch.load(reference)
                equal &= same(saved["compiled"], first["compiled"], agree) and same(
                    saved["eager"], first["eager"], agree
                )
                difference = max(
                    difference,
                    _difference(saved["compiled"], first["compiled"]),
                    _difference(saved["eager"], first["eager"]),
                )
        errors = [r["error"] for rs in records.values() for r in rs if "error" in r]
        if errors:
            print(f"| {name} | error: {errors[0]} | | | | |")
            continue
        before, after = records["original"], records["fixed"]
        ratios = [a["steady_median_ms"] / b["steady_median_ms"] for a, b in zip(after, before) if b["steady_median_ms"]]
        spread = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})" if ratios else "—"
        steady = (
            (
                f"{statistics.median(r['steady_median_ms'] for r in before):.3f} → "
                f"{statistics.median(r['steady_median_ms'] for r in after):.3f}"
            )
            if ratios
            else "—"
        )
        skips = f"{before[0]['cudagraph_skips']} → {after[0]['cudagraph_skips']}" if cuda else "— (no GPU)"
        agreement = ("yes" if equal else "NO") + (
            " (bit for bit)" if difference == 0 else f" (max |Δ| {difference:.1e})"
        )
        print(
            f"| {name} | {before[0]['graphs']} → {after[0]['graphs']} | {skips} | {agreement} | {steady} | {spread} |"
        )
        failed |= not equal
        rows.append(
            {
                "case": name,
                "original": before,
                "fixed": after,
                "equal": equal,
                "max_difference": difference,
                "ratios": ratios,
            }
        )
    if cuda:
        print("\nWhy inductor skipped CUDA graphs (its log, each process of the first pair):\n")
        print("| case | original | fixed |\n|---|---|---|")
        for row in rows:
            reasons = [
                ("; ".join(row[variant][0]["skip_reasons"]) or "—").replace("|", "\\|")
                for variant in ("original", "fixed")
            ]
            print(f"| {row['case']} | {reasons[0]} | {reasons[1]} |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
