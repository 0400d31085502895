"""Speed the rewrites buy under torch.compile: original transformers 4.49.0 vs a copy fixed by graphmend.

    python benchmarks/gpu_effect.py [--cases A,B] [--sizes tiny,large] [--modes default,reduce-overhead]
                                    [--pairs 3] [--calls N] [--json OUT] [--keep DIR] [--timeout S]

1. Copies the installed transformers package and runs `graphmend fix --unsafe-fixes` on the model
   files of the families measured (`models/<family>/modeling_<family>.py`) and on
   `harness.SHARED_FILES` in the copy (as `paper_table2.py` does).
2. For each case x size x mode, `--pairs` pairs of fresh processes, run one at a time and alternated
   (original, fixed, original, fixed, ...), each with an empty inductor cache (its own
   TORCHINDUCTOR_CACHE_DIR, FX graph cache off). A process builds the model from a config in code
   (seeded random weights, eval, no_grad; nothing is downloaded), on the GPU when one is visible
   (bf16 for the large size, fp32 for tiny) and on the CPU otherwise (fp32), compiles it with
   `torch.compile(model, mode=MODE)` and measures:
   - cold start: the first forward, compilation included, split by `torch._dynamo.utils.compile_times`
     into Dynamo tracing, AOTAutograd, inductor lowering/codegen, kernel compilation, Triton autotuning,
     CUDA-graph setup and the rest (running the graphs and the eager code between them);
   - steady state: after 7 warm-up forwards, the median and minimum of `--calls` timed forwards
     (default 200 on a GPU; 50 tiny / 20 large on the CPU);
   - one profiled steady forward: compiled regions and compiled graphs run per forward and, on a
     GPU, kernel launches (CPU-side launch calls) and cudaGraphLaunch calls;
   - Dynamo's counters: graphs compiled by the first forward (the paper's count) and by the last
     (recompiles included), graph breaks, CUDA-graph skips (GPU).
3. Prints a markdown table (device, versions and command line on top): graphs (first forward, all
   forwards) and compiled regions per forward before -> after, steady ms (median over pairs of each
   process's median), the fixed / original ratio per pair (median and min-max spread) for steady
   state and cold start, and whether the outputs agree (NaN equal to NaN; fp32: bit for bit on the CPU, within
   harness.CUDA_FP32_TOLERANCE on a GPU, where inductor's timed choice of reduction kernels makes two
   processes of the same code differ, the control's too; bf16: allclose, rtol = atol = 1e-2; the largest difference);
   then the cold-start breakdown (median seconds per stage). `--json` writes every record and row.

`mode="reduce-overhead"` (CUDA graphs) runs only when a GPU is visible. BioGPT is the control: its
graph count is the same before and after. Exits non-zero when a worker fails or outputs disagree.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
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
    fixed_copy,
    identical,
    max_difference,
    run_worker,
    timing_lock,
    worker_env,
)
from torch import nn

Inputs = dict[str, Any]
WARMUP = 7  # forwards between the cold start and the timed ones
MODES = ("default", "reduce-overhead")
SIZES = ("tiny", "large")
CPU_CALLS = {"tiny": 50, "large": 20}  # timed forwards per process on the CPU; 200 on a GPU
CPU_THREADS = 1  # intra-op threads per CPU worker
GPU_CALLS = 200
CONTROL = "biogpt"
# cold-start stages: seconds from compile_times keys (see cold_stages)
STAGES = ("dynamo", "aot", "inductor", "kernels", "autotune", "cudagraphs", "rest")


@dataclass(frozen=True)
class Dims:
    """The sizes shared by every model of one size."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    seq: int


DIMS = {
    "tiny": Dims(hidden=16, layers=2, heads=2, ffn=32, vocab=32, seq=8),
    "large": Dims(hidden=512, layers=4, heads=8, ffn=2048, vocab=1024, seq=128),
}


# ---------------------------------------------------------------- models and inputs


def _ids(length: int, high: int, low: int = 1, seed: int = 1) -> torch.Tensor:
    """Token ids of shape (1, length), drawn from their own generator (independent of the weights' draws)."""
    return torch.randint(low, high, (1, length), generator=torch.Generator().manual_seed(seed))


def _t5(size: str) -> tuple[nn.Module, Inputs]:
    d = DIMS[size]
    config = transformers.T5Config(
        vocab_size=d.vocab,
        d_model=d.hidden,
        d_kv=d.hidden // d.heads,
        d_ff=d.ffn,
        num_layers=d.layers,
        num_decoder_layers=d.layers,
        num_heads=d.heads,
        feed_forward_proj="gated-gelu",
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    return transformers.T5ForConditionalGeneration(config), dict(
        input_ids=_ids(d.seq, d.vocab), decoder_input_ids=_ids(d.seq, d.vocab, seed=2)
    )


# Phi-3 longrope: (original_max_position_embeddings, long sequence, short sequence) per size
PHI3_LENGTHS = {"tiny": (4, 8, 3), "large": (64, 128, 64)}


def _phi3(long: bool, size: str) -> tuple[nn.Module, Inputs]:
    """Phi-3 with longrope, on a sequence longer than original_max_position_embeddings (long) or not."""
    d = DIMS[size]
    original, long_seq, short_seq = PHI3_LENGTHS[size]
    half_head = d.hidden // d.heads // 2
    config = transformers.Phi3Config(
        vocab_size=d.vocab,
        hidden_size=d.hidden,
        intermediate_size=d.ffn,
        num_hidden_layers=d.layers,
        num_attention_heads=d.heads,
        num_key_value_heads=d.heads,
        max_position_embeddings=4 * long_seq,
        original_max_position_embeddings=original,
        pad_token_id=0,
        rope_scaling={"type": "longrope", "short_factor": [1.0] * half_head, "long_factor": [2.0] * half_head},
    )
    return transformers.Phi3ForCausalLM(config), dict(input_ids=_ids(long_seq if long else short_seq, d.vocab))


# Longformer: (attention window, sequence length not a multiple of it) per size
LONGFORMER_LENGTHS = {"tiny": (4, 7), "large": (64, 130)}


def _longformer(size: str) -> tuple[nn.Module, Inputs]:
    d = DIMS[size]
    window, seq = LONGFORMER_LENGTHS[size]
    config = transformers.LongformerConfig(
        vocab_size=d.vocab,
        hidden_size=d.hidden,
        num_hidden_layers=d.layers,
        num_attention_heads=d.heads,
        intermediate_size=d.ffn,
        attention_window=[window] * d.layers,
        max_position_embeddings=4 * seq,
        pad_token_id=1,
    )
    return transformers.LongformerModel(config), dict(input_ids=_ids(seq, d.vocab, low=2))


def _qwen2_audio(size: str) -> tuple[nn.Module, Inputs]:
    """Qwen2-Audio with expanded inputs: 2 * max_source_positions mel frames give max_source_positions / 2
    audio tokens, placed mid-sequence; the audio token index is the first id past the text ids."""
    d = DIMS[size]
    positions = d.seq  # the encoder's max_source_positions: 8 tiny (4 audio tokens), 128 large (64)
    audio_tokens, text = positions // 2, d.seq - positions // 2
    audio = transformers.Qwen2AudioEncoderConfig(
        num_mel_bins=d.hidden // 2,
        encoder_layers=d.layers,
        encoder_attention_heads=d.heads,
        encoder_ffn_dim=d.ffn,
        d_model=d.hidden,
        max_source_positions=positions,
    )
    language = transformers.Qwen2Config(
        vocab_size=d.vocab + 32,
        hidden_size=d.hidden,
        intermediate_size=d.ffn,
        num_hidden_layers=d.layers,
        num_attention_heads=d.heads,
        num_key_value_heads=d.heads,
        max_position_embeddings=4 * d.seq,
    )
    model = transformers.Qwen2AudioForConditionalGeneration(
        transformers.Qwen2AudioConfig(audio_config=audio, text_config=language, audio_token_index=d.vocab)
    )
    words = _ids(text, d.vocab)
    ids = torch.cat([words[:, : text // 2], torch.full((1, audio_tokens), d.vocab), words[:, text // 2 :]], dim=1)
    features = torch.randn(1, d.hidden // 2, 2 * positions, generator=torch.Generator().manual_seed(3))
    return model, dict(
        input_ids=ids,
        attention_mask=torch.ones_like(ids),
        input_features=features,
        feature_attention_mask=torch.ones(1, 2 * positions, dtype=torch.long),
    )


def _biogpt(size: str) -> tuple[nn.Module, Inputs]:
    d = DIMS[size]
    config = transformers.BioGptConfig(
        vocab_size=d.vocab,
        hidden_size=d.hidden,
        num_hidden_layers=d.layers,
        num_attention_heads=d.heads,
        intermediate_size=d.ffn,
        max_position_embeddings=4 * d.seq,
    )
    return transformers.BioGptForCausalLM(config), dict(input_ids=_ids(d.seq, d.vocab))


def _bart_like(name: str, size: str) -> tuple[nn.Module, Inputs]:
    """A BART-style seq2seq model (Pegasus, Blenderbot) on encoder and decoder ids of the size's length."""
    d = DIMS[size]
    model_class = getattr(transformers, name)
    config = model_class.config_class(
        vocab_size=d.vocab,
        d_model=d.hidden,
        encoder_layers=d.layers,
        decoder_layers=d.layers,
        encoder_attention_heads=d.heads,
        decoder_attention_heads=d.heads,
        encoder_ffn_dim=d.ffn,
        decoder_ffn_dim=d.ffn,
        max_position_embeddings=4 * d.seq,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )
    ids = _ids(d.seq, d.vocab, low=3)
    return model_class(config), dict(
        input_ids=ids, attention_mask=torch.ones_like(ids), decoder_input_ids=_ids(d.seq, d.vocab, low=3, seed=2)
    )


@dataclass(frozen=True)
class Case:
    """One row per size and mode: a model family (whose modeling file is fixed) and its builder."""

    name: str
    family: str
    build: Callable[[str], tuple[nn.Module, Inputs]]


CASES: dict[str, Case] = {
    case.name: case
    for case in [
        Case("t5", "t5", _t5),
        Case("phi3-long", "phi3", lambda size: _phi3(True, size)),
        Case("phi3-short", "phi3", lambda size: _phi3(False, size)),
        Case("longformer", "longformer", _longformer),
        Case("qwen2-audio", "qwen2_audio", _qwen2_audio),
        Case(CONTROL, "biogpt", _biogpt),
        Case("pegasus", "pegasus", lambda size: _bart_like("PegasusForConditionalGeneration", size)),
        Case("blenderbot", "blenderbot", lambda size: _bart_like("BlenderbotForConditionalGeneration", size)),
    ]
}


# ---------------------------------------------------------------- the worker (one measurement, one process)


def compile_times() -> dict[str, float]:
    """Seconds per `dynamo_timed` key so far in this process, summed over its calls."""
    headers, values = torch._dynamo.utils.compile_times(repr="csv", aggregate=True)
    return {key: float(value) for key, value in zip(headers, values)}


def cold_stages(times: dict[str, float], cold: float) -> dict[str, float]:
    """The first forward split into stages that add up to `cold`.

    Inside Dynamo's frame compiles (`_compile.compile_inner`): Dynamo tracing and guards (the rest of
    compile_inner beside `OutputGraph.call_user_compiler`), AOTAutograd and graph passes (the rest of
    call_user_compiler beside `compile_fx_inner`), inductor lowering and codegen (the rest of
    compile_fx_inner), kernel compilation (`PyCodeCache.load_by_key_path`: loading the generated module
    compiles its C++/Triton kernels or waits for them, `async_compile.wait` included). Outside: Triton
    autotuning at a kernel's first launch (`CachingAutotuner.benchmark_all_configs`), CUDA-graph setup
    (`cudagraphify.get_container`, `CUDAGraphNode.record`), and the rest (running the graphs, the eager
    code between them, guard checks).
    """

    def get(key: str) -> float:
        return times.get(key, 0.0)

    kernels = get("PyCodeCache.load_by_key_path")
    autotune = get("CachingAutotuner.benchmark_all_configs")
    cudagraphs = get("cudagraphify.get_container") + get("CUDAGraphNode.record")
    return {
        "dynamo": get("_compile.compile_inner") - get("OutputGraph.call_user_compiler"),
        "aot": get("OutputGraph.call_user_compiler") - get("compile_fx_inner"),
        "inductor": get("compile_fx_inner") - kernels,
        "kernels": kernels,
        "autotune": autotune,
        "cudagraphs": cudagraphs,
        "rest": cold - get("_compile.compile_inner") - autotune - cudagraphs,
    }


def profile_forward(call: Callable[[], Any], cuda: bool) -> dict[str, int | None]:
    """Compiled regions and graphs one forward runs; on CUDA, its kernel launch calls (cudaLaunchKernel,
    cuLaunchKernel and their variants), cudaGraphLaunch calls and the kernels the GPU ran."""
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    with torch.profiler.profile(activities=activities) as profiler:
        call()
    events = profiler.events()
    names = [event.name for event in events]
    gpu = [event.name for event in events if event.device_type == torch.autograd.DeviceType.CUDA]
    return {
        "compiled_regions": sum(name.startswith("Torch-Compiled Region") for name in names),
        "graph_calls": sum(name.startswith("## Call CompiledFxGraph") for name in names),
        "kernel_launches": sum("LaunchKernel" in name for name in names) if cuda else None,
        "graph_launches": sum(name == "cudaGraphLaunch" for name in names) if cuda else None,
        "gpu_kernels": sum(not name.startswith(("Memcpy", "Memset")) for name in gpu) if cuda else None,
    }


def worker(name: str, size: str, mode: str, calls: int, out: Path, expected_package: Path) -> None:
    """Build, compile and measure one case in this process; write the record to `out`, the output to `out`.pt."""
    exit_unless_imported_from(expected_package)
    transformers.logging.set_verbosity_error()
    cuda = torch.cuda.is_available()
    device = torch.device("cuda" if cuda else "cpu")
    dtype = torch.bfloat16 if cuda and size == "large" else torch.float32
    if not cuda:  # one thread: on a shared 2-core machine, intra-op threads add more noise than speed
        torch.set_num_threads(CPU_THREADS)
    torch.manual_seed(0)
    model, inputs = CASES[name].build(size)
    model = model.eval().to(device=device, dtype=dtype)
    inputs = {
        key: value.to(device=device, dtype=dtype if value.is_floating_point() else value.dtype)
        for key, value in inputs.items()
    }
    skip_reasons = collect_cudagraph_skips() if cuda else []
    compiled = torch.compile(model, mode=mode)
    counters = torch._dynamo.utils.counters

    def call() -> torch.Tensor:
        output = compiled(**inputs)[0]
        if cuda:
            torch.cuda.synchronize()
        return output

    def timed() -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    with torch.no_grad():
        cold = timed()
        times_cold = compile_times()
        graphs_first = counters["stats"]["unique_graphs"]
        with timing_lock():
            warmup = sum(timed() for _ in range(WARMUP))
            times_warm = compile_times()
            steady = [timed() for _ in range(calls)]
            profiled = profile_forward(call, cuda)
        torch.save(call().detach().cpu().clone(), f"{out}.pt")
    out.write_text(
        json.dumps(
            {
                "case": name,
                "size": size,
                "mode": mode,
                "calls": calls,
                "dtype": str(dtype).removeprefix("torch."),
                "device": torch.cuda.get_device_name() if cuda else cpu_name(),
                "transformers": transformers.__file__,
                "graphs_first": graphs_first,
                "graphs": counters["stats"]["unique_graphs"],
                "graph_breaks": sum(counters["graph_break"].values()),
                "cudagraph_skips": counters["inductor"]["cudagraph_skips"] if cuda else None,
                "skip_reasons": sorted(set(skip_reasons)),
                "cold_s": cold,
                "stages": cold_stages(times_cold, cold),
                "warmup_s": warmup,
                "cudagraph_record_s": times_warm.get("CUDAGraphNode.record", 0.0) if cuda else None,
                "steady_median_ms": 1000 * statistics.median(steady),
                "steady_min_ms": 1000 * min(steady),
                "steady_ms": [1000 * value for value in steady],
                **profiled,
                "compile_times_cold": times_cold,
                "compile_times_warm": times_warm,
            }
        )
    )


def cpu_name() -> str:
    """The CPU's model name and core count."""
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    model = next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
        platform.processor() or "CPU",
    )
    return f"{model} ({os.cpu_count()} cores)"


# ---------------------------------------------------------------- the driver


def measure(
    job: tuple[str, str, str], calls: int, package: Path, pythonpath: Path | None, out: Path, timeout: float
) -> dict[str, Any]:
    """One worker process with an empty inductor cache; its record, or {"error": why}."""
    with empty_inductor_cache() as cache:
        return run_worker(
            __file__, [*job, str(calls), str(out), str(package)], worker_env(pythonpath, **cache), out, timeout
        )


@dataclass(frozen=True)
class Agreement:
    """How two saved outputs compare; NaN equals NaN in the same place."""

    equal: bool  # bit for bit
    close_fp32_gpu: bool  # within the reduction-order differences of two GPU processes (harness.close_on_gpu)
    close_bf16: bool  # allclose with rtol = atol = 1e-2
    difference: float  # the largest |a - b|


def outputs_agree(first: Path, second: Path) -> Agreement:
    a, b = torch.load(first), torch.load(second)
    if a.shape != b.shape:
        return Agreement(False, False, False, float("inf"))
    return Agreement(
        identical(a, b),
        close_on_gpu(a, b),
        torch.allclose(a.float(), b.float(), rtol=1e-2, atol=1e-2, equal_nan=True),
        max_difference(a, b),
    )


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def summarize(
    job: tuple[str, str, str], pairs: list[dict[str, dict[str, Any]]], agree: list[Agreement]
) -> dict[str, Any]:
    """One row from the pairs of records of a case x size x mode."""
    name, size, mode = job
    row: dict[str, Any] = {
        "case": name,
        "size": size,
        "mode": mode,
        "control": name == CONTROL,
        "errors": [
            f"{variant}: {pair[variant]['error']}"
            for pair in pairs
            for variant in ("original", "fixed")
            if "error" in pair[variant]
        ],
    }
    if row["errors"]:
        return row
    dtype = pairs[0]["original"]["dtype"]
    row["dtype"] = dtype
    for variant in ("original", "fixed"):
        records = [pair[variant] for pair in pairs]
        for key in (
            "graphs_first",
            "graphs",
            "graph_breaks",
            "compiled_regions",
            "graph_calls",
            "kernel_launches",
            "graph_launches",
            "gpu_kernels",
            "cudagraph_skips",
        ):
            row[f"{key}_{variant}"] = sorted({record[key] for record in records}, key=str)
        row[f"steady_ms_{variant}"] = statistics.median(record["steady_median_ms"] for record in records)
        row[f"steady_min_ms_{variant}"] = min(record["steady_min_ms"] for record in records)
        row[f"cold_s_{variant}"] = statistics.median(record["cold_s"] for record in records)
        row[f"warmup_s_{variant}"] = statistics.median(record["warmup_s"] for record in records)
        row[f"stages_{variant}"] = {
            stage: statistics.median(record["stages"][stage] for record in records) for stage in STAGES
        }
        if records[0]["cudagraph_record_s"] is not None:
            row[f"cudagraph_record_s_{variant}"] = statistics.median(record["cudagraph_record_s"] for record in records)
    row["steady_ratio"] = _spread(
        [pair["fixed"]["steady_median_ms"] / pair["original"]["steady_median_ms"] for pair in pairs]
    )
    row["cold_ratio"] = _spread([pair["fixed"]["cold_s"] / pair["original"]["cold_s"] for pair in pairs])
    # First forward plus warm-up: a recompilation on the second call (a guard the first call flips) counts here.
    row["ready_ratio"] = _spread(
        [
            (pair["fixed"]["cold_s"] + pair["fixed"]["warmup_s"])
            / (pair["original"]["cold_s"] + pair["original"]["warmup_s"])
            for pair in pairs
        ]
    )
    # On a GPU fp32 outputs of two processes differ by reduction order (the control too): compared within tolerance.
    cuda = pairs[0]["original"]["cudagraph_skips"] is not None
    row["outputs_equal"] = all(a.equal for a in agree)
    row["outputs_allclose"] = all(a.close_bf16 for a in agree)
    row["outputs_difference"] = max((a.difference for a in agree), default=0.0)
    if dtype != "float32":
        row["outputs_ok"] = row["outputs_allclose"]
    else:
        row["outputs_ok"] = all(a.close_fp32_gpu for a in agree) if cuda else row["outputs_equal"]
    return row


def _values(row: dict[str, Any], key: str) -> str:
    """`key` before -> after (several values: the distinct values over the processes)."""
    return " → ".join("/".join(map(str, row[f"{key}_{variant}"])) for variant in ("original", "fixed"))


def _label(row: dict[str, Any]) -> str:
    return f"{row['case']} (control)" if row["control"] else row["case"]


def print_tables(rows: list[dict[str, Any]], header: list[str], cuda: bool) -> None:
    """The markdown table of effects, then the cold-start breakdown."""
    print("\n".join(header) + "\n")
    gpu_columns = (
        (" | kernel launch calls / forward | GPU kernels / forward | cudaGraphLaunch / forward | CUDA-graph skips")
        if cuda
        else ""
    )
    print(
        "| case | size | mode | dtype | graphs (first forward) | graphs (all forwards) | compiled regions / forward"
        + gpu_columns
        + " | steady ms original | steady ms fixed | steady ratio (min–max) | cold s original | cold s fixed "
        "| cold ratio (min–max) | cold + warm-up ratio (min–max) | outputs equal / allclose / max abs difference |"
    )
    print("|---|---|---|---|---|---|---" + "|---" * (4 if cuda else 0) + "|---:" * 7 + "|---|")
    for row in rows:
        lead = f"| {_label(row)} | {row['size']} | {row['mode']}"
        if row["errors"]:
            print(lead + " | FAILED: " + "; ".join(row["errors"]).replace("|", "\\|") + " |")
            continue
        gpu = "".join(
            f" | {_values(row, key)}"
            for key in ("kernel_launches", "gpu_kernels", "graph_launches", "cudagraph_skips")
            if cuda
        )
        steady, cold, ready = row["steady_ratio"], row["cold_ratio"], row["ready_ratio"]
        print(
            f"{lead} | {row['dtype']} | {_values(row, 'graphs_first')} | {_values(row, 'graphs')} "
            f"| {_values(row, 'compiled_regions')}"
            f"{gpu} | {row['steady_ms_original']:.3f} | {row['steady_ms_fixed']:.3f} "
            f"| {steady['median']:.2f} ({steady['min']:.2f}–{steady['max']:.2f}) "
            f"| {row['cold_s_original']:.2f} | {row['cold_s_fixed']:.2f} "
            f"| {cold['median']:.2f} ({cold['min']:.2f}–{cold['max']:.2f}) "
            f"| {ready['median']:.2f} ({ready['min']:.2f}–{ready['max']:.2f}) "
            f"| {'yes' if row['outputs_equal'] else 'no'} / {'yes' if row['outputs_allclose'] else 'NO'}"
            f" / {row['outputs_difference']:.1e}{'' if row['outputs_ok'] else ' FAILED'} |"
        )
    print(
        "\nCold start (first forward) by stage, median seconds over the processes: Dynamo tracing, "
        "AOTAutograd, inductor lowering/codegen, kernel compilation, Triton autotuning, CUDA-graph setup, "
        "the rest (running graphs and eager code); then the warm-up forwards"
        + (" and the CUDA-graph recording by the end of warm-up" if cuda else "")
        + ".\n"
    )
    record_column = " | CUDA-graph record s" if cuda else ""
    print(
        "| case | size | mode | variant | cold s | "
        + " | ".join(STAGES)
        + f" | warm-up s ({WARMUP} calls)"
        + record_column
        + " |"
    )
    print("|---|---|---|---" + "|---:" * (len(STAGES) + 2 + bool(cuda)) + "|")
    for row in rows:
        if row["errors"]:
            continue
        for variant in ("original", "fixed"):
            stages = " | ".join(f"{row[f'stages_{variant}'][stage]:.2f}" for stage in STAGES)
            recorded = f" | {row[f'cudagraph_record_s_{variant}']:.2f}" if cuda else ""
            print(
                f"| {_label(row)} | {row['size']} | {row['mode']} | {variant} | {row[f'cold_s_{variant}']:.2f} "
                f"| {stages} | {row[f'warmup_s_{variant}']:.2f}{recorded} |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help=f"comma-separated subset of: {', '.join(CASES)} (default all)")
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma-separated: tiny, large (default both)")
    parser.add_argument("--modes", help="comma-separated: default, reduce-overhead (default: those that apply)")
    parser.add_argument("--pairs", type=int, default=3, help="original/fixed process pairs per row (default 3)")
    parser.add_argument(
        "--calls",
        type=int,
        help=f"timed steady forwards per process (default {GPU_CALLS} on a "
        f"GPU, {CPU_CALLS['tiny']} tiny / {CPU_CALLS['large']} large on the CPU)",
    )
    parser.add_argument("--json", type=Path, help="write every record and row as JSON to this file")
    parser.add_argument("--keep", type=Path, help="folder for the fixed copy, records and outputs (default: temp)")
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per worker process (default 1200)")
    parser.add_argument(
        "--worker", nargs=6, metavar=("CASE", "SIZE", "MODE", "CALLS", "OUT", "PACKAGE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.worker:
        name, size, mode, calls, out, package = args.worker
        worker(name, size, mode, int(calls), Path(out), Path(package))
        return 0
    if transformers.__version__ != "4.49.0":
        print(f"needs transformers==4.49.0 (the paper's breaks), found {transformers.__version__}", file=sys.stderr)
        return 2
    cuda = torch.cuda.is_available()
    names = args.cases.split(",") if args.cases else list(CASES)
    sizes = args.sizes.split(",")
    modes = args.modes.split(",") if args.modes else list(MODES)
    for kind, chosen, known in (("cases", names, CASES), ("sizes", sizes, SIZES), ("modes", modes, MODES)):
        if unknown := [value for value in chosen if value not in known]:
            parser.error(f"unknown {kind} {', '.join(unknown)}; known: {', '.join(known)}")
    if not cuda and "reduce-overhead" in modes:
        print("mode reduce-overhead skipped: no CUDA device (CUDA graphs need one); measuring mode default only")
        modes.remove("reduce-overhead")
    started = time.monotonic()
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphmend-gpu-effect-"))
    (work / "runs").mkdir(parents=True, exist_ok=True)
    site = fixed_copy(work, sorted({CASES[name].family for name in names}))
    variants = {"original": (Path(transformers.__file__).parent, None), "fixed": (site / "transformers", site)}
    records, rows = [], []
    for job in [(name, size, mode) for name in names for size in sizes for mode in modes]:
        calls = args.calls or (GPU_CALLS if cuda else CPU_CALLS[job[1]])
        pairs, agree = [], []
        for pair in range(args.pairs):  # one process at a time, variants alternated
            paths = {variant: work / "runs" / f"{'.'.join(job)}.{pair}.{variant}.json" for variant in variants}
            pairs.append(
                {variant: measure(job, calls, *variants[variant], paths[variant], args.timeout) for variant in variants}
            )
            records += [dict(record, variant=variant, pair=pair) for variant, record in pairs[-1].items()]
            if not any("error" in record for record in pairs[-1].values()):
                agree.append(outputs_agree(Path(f"{paths['original']}.pt"), Path(f"{paths['fixed']}.pt")))
        rows.append(summarize(job, pairs, agree))
        print(f"measured {' '.join(job)} ({time.monotonic() - started:.0f} s)", flush=True)
        if args.json:  # the rows so far: a lease that ends mid-run keeps what it measured
            args.json.write_text(json.dumps({"rows": rows, "records": records}, indent=1))
    device = next((record["device"] for record in records if "device" in record), "?")
    header = [
        f"Device: {device}; torch {torch.__version__}, transformers {transformers.__version__}; "
        f"{args.pairs} process pairs per row, each process with an empty inductor cache.",
        f"Command: `{shlex.join(['python', *sys.argv])}`",
    ]
    print()
    print_tables(rows, header, cuda)
    print(f"\n{len(rows)} rows in {time.monotonic() - started:.0f} s; records in {work / 'runs'}")
    if args.json:
        args.json.write_text(json.dumps({"header": header, "rows": rows, "records": records}, indent=1))
    failed = [row for row in rows if row["errors"] or not row["outputs_ok"]]
    for row in failed:
        print(
            f"FAILED {row['case']} {row['size']} {row['mode']}: " + ("; ".join(row["errors"]) or "outputs differ"),
            file=sys.stderr,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
