"""graphmend's findings against real Dynamo on a transformers 5.x release (issue 18, item 7).

    python -m venv /tmp/tf5venv
    /tmp/tf5venv/bin/pip install torch==2.13.0 transformers==5.23.0 -e .
    /tmp/tf5venv/bin/python benchmarks/agreement_5x.py [--types A,B | --flagged] [--limit N] [--jobs N] [--json OUT]
        [--work DIR] [--mend DIR]

Its own virtual environment, never the test one. Every architecture of the release's
`MODEL_MAPPING_NAMES` (or `--types`) is built tiny from its own default config
(`tiny_models.py`), in eval and in training, each in a fresh process: the eager forward is traced
with `sys.settrace` to record the instructions it runs in `transformers/models/` (their source
positions), then a compiled forward
records Dynamo's break sites (graph_breaks log, counting backend). Recall, precision and the lists
of misses and unconfirmed findings are computed as in `agreement.py`. Architectures this cannot
build or feed are listed with the reason. `--flagged` picks the architectures whose model folder has a
GM1xx/GM2xx finding, and the popular ones, in a fixed shuffled order (a run may stop early and
still be a fair sample).

`--mend DIR` then copies the installed package to DIR, runs `graphmend fix --unsafe-fixes` on the
model folders where a case broke, and runs every breaking case again before (installed) and after
(the copy first on PYTHONPATH), same seed and inputs: graphs, break sites, whether the eager and
the compiled outputs of before and after are `torch.equal`, and in training every parameter's
gradient after the backward of the first output's sum, before against after.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import agreement
import harness
import numpy
import tiny_models
import torch
import torch._dynamo.testing
import transformers

MODES = ("eval", "train", "fp16")  # fp16: eval in float16
MEMORY_LIMIT = 6 << 30  # bytes of address space per worker
POPULAR = (
    "llama",
    "mistral",
    "qwen2",
    "qwen3",
    "phi3",
    "gemma",
    "gemma2",
    "mixtral",
    "gpt2",
    "bert",
    "roberta",
    "t5",
    "bart",
    "whisper",
    "wav2vec2",
    "vit",
    "clip",
    "deberta-v2",
    "distilbert",
    "falcon",
    "gpt_neox",
    "opt",
    "llava",
    "mamba",
)


def flagged_types(types: list[str]) -> list[str]:
    """`types` whose model folder in the installed package has a GM1xx/GM2xx finding, and the
    popular ones, shuffled with a fixed seed."""
    from transformers.models.auto.configuration_auto import model_type_to_module_name

    models = Path(transformers.__file__).resolve().parent / "models"
    graphmend = Path(sys.executable).with_name("graphmend")
    found = subprocess.run(
        [str(graphmend), "check", str(models), "--output-format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
    )
    folders = {
        Path(d["path"]).relative_to(models).parts[0]
        for d in json.loads(found.stdout)
        if d["code"].startswith(("GM1", "GM2"))
    }
    chosen = sorted(t for t in types if model_type_to_module_name(t) in folders or t in POPULAR)
    random.Random(0).shuffle(chosen)
    return chosen


EXPECT_PACKAGE = "GRAPHMEND_EXPECT_PACKAGE"  # the transformers folder a worker must import (--mend's copy)
# "1": Dynamo draws NumPy's random numbers from NumPy's own stream, as eager code does. --mend sets it
# for both variants, so that a speech model's SpecAugment masks are the same before and after the
# fix (by default Dynamo draws them from torch's generator, whose order the fix changes).
NUMPY_STREAM = "GRAPHMEND_NUMPY_RANDOM_STREAM"


def _seed() -> None:
    """The same draws for every run: torch's, NumPy's (SpecAugment masking) and Python's."""
    torch.manual_seed(0)
    numpy.random.seed(0)
    random.seed(0)


def _first_tensor(output: Any, detach: bool = True) -> torch.Tensor | None:
    """The first tensor of a model's output (`last_hidden_state`, `logits`...), detached unless asked."""
    values = (
        output.to_tuple() if hasattr(output, "to_tuple") else output if isinstance(output, (tuple, list)) else (output,)
    )
    for value in values:
        if torch.is_tensor(value):
            return value.detach() if detach else value
        found = _first_tensor(value, detach) if isinstance(value, (tuple, list)) else None
        if found is not None:
            return found
    return None


def _step_losses(compiled: Any, inputs: dict[str, Any]) -> list[torch.Tensor]:
    """One optimiser step's loss: the first output tensor of a seeded compiled forward."""
    _seed()
    first = _first_tensor(compiled(**inputs), detach=False)
    return [] if first is None else [first]


def _gradients(model: torch.nn.Module, output: Any) -> harness.Gradients | None:
    """Every parameter's gradient after the backward of the first output tensor's sum (None when
    that tensor does not require grad)."""
    first = _first_tensor(output, detach=False)
    if first is None or not first.requires_grad:
        return None
    return harness.parameter_gradients(model, first)


_CODE_POSITIONS: dict[Any, list[tuple[int, ...]]] = {}


def _trace_positions(executed: dict[str, set[tuple[int, ...]]], frame: Any, event: str, arg: Any) -> Any:
    """A `sys.settrace` function that records the source positions (`co_positions`) of the
    instructions run in `transformers/models/` files: finer than lines, a tensor test after a
    Python operand that short-circuits shows as not run."""
    code = frame.f_code
    if "/transformers/models/" not in code.co_filename:
        return None
    frame.f_trace_opcodes = True
    ran = executed.setdefault(code.co_filename.split("/transformers/")[-1], set())
    positions = _CODE_POSITIONS.get(code)
    if positions is None:
        positions = _CODE_POSITIONS[code] = list(code.co_positions())

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            position = positions[frame.f_lasti // 2]
            if None not in position:
                ran.add(position)
        return local

    return local


def worker(model_type: str, mode: str, out: Path) -> None:
    """Build, trace and compile one architecture in one mode; write its record to `out`, and its
    eager and compiled outputs to `out` with the suffix `.pt`."""
    if os.environ.get(EXPECT_PACKAGE):
        harness.exit_unless_imported_from(Path(os.environ[EXPECT_PACKAGE]))
    resource.setrlimit(
        resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT)
    )  # a config that did not shrink fails, not the machine
    torch.set_num_threads(1)
    if os.environ.get(NUMPY_STREAM) == "1":
        torch._dynamo.config.use_numpy_random_stream = True
    transformers.logging.set_verbosity_error()
    sites = harness.collect_break_sites()
    _seed()
    model, inputs = tiny_models.build(model_type)
    _seed()
    twin, _ = tiny_models.build(model_type)  # compiled apart: an eager call may change state (BigBird's attention type)
    train = mode == "train"
    if train and "use_cache" in inspect.signature(model.forward).parameters:
        inputs = dict(inputs, use_cache=False)
    if mode == "fp16":  # the float16 guards (clamps of infinities) run only here
        model.half()
        twin.half()
        inputs = {
            key: value.half() if torch.is_tensor(value) and value.is_floating_point() else value
            for key, value in inputs.items()
        }
    model.train(train)
    twin.train(train)
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(twin, backend=counter)
    executed: dict[str, set[tuple[int, ...]]] = {}
    with torch.set_grad_enabled(train):
        sys.settrace(partial(_trace_positions, executed))
        try:
            _seed()
            eager_output = model(**inputs)
        finally:
            sys.settrace(None)
        _seed()
        compiled_output = compiled(**inputs)
    saved: dict[str, Any] = {"eager": _first_tensor(eager_output), "compiled": _first_tensor(compiled_output)}
    graphs = counter.frame_count  # before the optimiser steps: layerdrop set to 0 recompiles
    if train:  # the fixes are judged backward included, and over optimiser steps
        saved["eager_gradients"] = _gradients(model, eager_output)
        saved["compiled_gradients"] = _gradients(twin, compiled_output)
        if saved["compiled_gradients"] is not None:  # no layer skipped: a LayerDrop gate's named zero-for-none aside
            harness.without_layerdrop(twin)
            saved["compiled_steps"] = harness.optimiser_steps(twin, partial(_step_losses, compiled, inputs))
    torch.save(saved, out.with_suffix(".pt"))
    out.write_text(
        json.dumps(
            {
                "executed": {path: sorted({p[0] for p in ran}) for path, ran in executed.items()},
                "positions": {path: sorted(ran) for path, ran in executed.items()},
                "graphs": graphs,
                "reasons": sites,
                "sites": sorted(sites, key=lambda site: (site.rsplit(":", 1)[0], int(site.rsplit(":", 1)[1]))),
            }
        )
    )


def run_case(
    name: str, work: Path, timeout: float, existing_only: bool = False, variant: str = "", package: Path | None = None
) -> dict[str, Any] | None:
    """The record of one case: run in a fresh process, or read from `work` when an earlier run left
    it. A `variant` (with `package`, a copy of transformers) runs against that copy."""
    model_type, mode = name.rsplit("/", 1)
    out = work / f"{model_type}.{mode}{variant}.json"
    if out.is_file():
        return json.loads(out.read_text())
    if existing_only:
        return None
    variables = {NUMPY_STREAM: "1"} if variant else {}
    if package is not None:
        variables[EXPECT_PACKAGE] = str(package)
    env = harness.worker_env(package.parent if package is not None else None, **variables)
    record = harness.run_worker(__file__, [model_type, mode, str(out)], env, out, timeout)
    if "error" in record:
        out.write_text(json.dumps(record))  # a failure is recorded too: a later run with --work reports it
    return record


def _model_sites(record: dict[str, Any]) -> list[str]:
    return [site for site in record.get("sites", []) if site.startswith("models/")]


def mend(built: dict[str, dict[str, Any]], work: Path, folder: Path, jobs: int, timeout: float) -> list[dict[str, Any]]:
    """Every case that broke in `models/`, before and after `graphmend fix --unsafe-fixes` on a copy,
    each variant in a run of its own with NumPy's own random stream under Dynamo."""
    breaking = [name for name, record in built.items() if _model_sites(record)]
    installed = Path(transformers.__file__).resolve().parent
    copy = folder / "site" / "transformers"
    if not copy.exists():
        shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
    models = sorted({site.split("/")[1] for name in breaking for site in _model_sites(built[name])})
    fixed = subprocess.run(
        [
            str(Path(sys.executable).with_name("graphmend")),
            "fix",
            "--unsafe-fixes",
            *(str(copy / "models" / m) for m in models),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    print(fixed.stdout.strip().splitlines()[-1] if fixed.stdout.strip() else fixed.stderr.strip())

    def outputs_of(name: str, variant: str) -> Path:
        model_type, mode = name.rsplit("/", 1)
        return folder / f"{model_type}.{mode}{variant}.pt"

    def run(job: tuple[str, str]) -> dict[str, Any] | None:
        name, variant = job  # both variants run here, with NumPy's own random stream (NUMPY_STREAM)
        return run_case(name, folder, timeout, variant=variant, package=copy if variant == ".after" else None)

    jobs_list = [(name, variant) for name in breaking for variant in (".before", ".after")]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        records = dict(zip(jobs_list, pool.map(run, jobs_list)))
    fixable = _fixable_sites(installed, models)
    rows = []
    for name in breaking:
        before, after = records[name, ".before"], records[name, ".after"]
        row = {
            "case": name,
            "before": before.get("graphs"),
            "after": after.get("graphs"),
            "rewritable": all(site in fixable for site in _model_sites(before)),
            "sites_after": _model_sites(after),
            "error": before.get("error") or after.get("error"),
        }
        if not row["error"]:
            outputs = [torch.load(outputs_of(name, v)) for v in (".before", ".after")]
            row["eager_equal"], row["compiled_equal"], row["compiled_as_eager_before"] = (
                _equal(outputs[0]["eager"], outputs[1]["eager"]),
                _equal(outputs[0]["compiled"], outputs[1]["compiled"]),
                _equal(outputs[0]["eager"], outputs[0]["compiled"]),
            )
            if name.endswith("/train"):
                row["gradients"] = _gradient_verdict(outputs[0], outputs[1])
        rows.append(row)
    print(
        "\n| case | every break in models/ rewritable | graphs before → after | break sites left in models/ | "
        "eager equal | compiled equal | before: compiled = eager | gradients before = after (eager / compiled) / parameters after 3 SGD and AdamW steps |"
    )
    print("|---|---|---:|---|---|---|---|---|")
    yes = {True: "yes", False: "NO"}
    for row in rows:
        if row["error"]:
            print(f"| {row['case']} | | error: {row['error'][:120]} | | | | | |")
            continue
        print(
            f"| {row['case']} | {yes[row['rewritable']]} | {row['before']} → {row['after']} | "
            f"{len(row['sites_after']) or '—'} | {yes[row['eager_equal']]} | "
            f"{yes[row['compiled_equal']]} | {yes[row['compiled_as_eager_before']]} | {row.get('gradients', '—')} |"
        )
    return rows


def _gradient_verdict(before: dict[str, Any], after: dict[str, Any]) -> str:
    """ "yes", "yes (N zero for none)" or "NO: <the first difference>", for eager and compiled."""
    verdicts = []
    for key in ("eager_gradients", "compiled_gradients"):
        old, new = before.get(key), after.get(key)
        if old is None or new is None:
            verdicts.append("—" if old is None and new is None else "NO: a gradient on one side only")
            continue
        differ, zeros = harness.gradient_difference([old], [new])
        verdicts.append(f"NO: {differ}" if differ else f"yes ({zeros} zero for none)" if zeros else "yes")
    old, new = before.get("compiled_steps"), after.get("compiled_steps")
    if old is not None or new is not None:
        differ = harness.parameters_difference(old or {}, new or {}) if old and new else "steps on one side only"
        verdicts.append(f"NO: {differ}" if differ else "yes")
    return " / ".join(verdicts)


def _equal(first: torch.Tensor | None, second: torch.Tensor | None) -> bool:
    """Bit for bit, except that NaN equals NaN in the same place (a tiny fp16 model overflows)."""
    return (
        first is not None
        and second is not None
        and first.shape == second.shape
        and first.dtype == second.dtype
        and torch.allclose(first, second, rtol=0, atol=0, equal_nan=True)
    )


def _fixable_sites(installed: Path, models: list[str]) -> set[str]:
    """The break sites ("models/x/y.py:LINE") that a `graphmend check` finding with a fix covers."""
    spans = harness.flagged_lines(
        sorted(p for m in models for p in (installed / "models" / m).glob("*.py")), fixed_only=True
    )
    return {
        f"{path.relative_to(installed).as_posix()}:{line}"
        for path, found in spans.items()
        for first, last in found
        for line in range(first, last + 1)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--types", help="comma-separated model types, or @FILE of them (default: every one of MODEL_MAPPING_NAMES)"
    )
    parser.add_argument(
        "--flagged", action="store_true", help="only the types with a GM1xx/GM2xx finding, and popular ones"
    )
    parser.add_argument("--limit", type=int, help="the first N model types only")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--json", type=Path, help="write the records and the result as JSON here")
    parser.add_argument("--work", type=Path, help="folder for the records; cases recorded there are not run again")
    parser.add_argument("--existing", action="store_true", help="only report the cases already recorded in --work")
    parser.add_argument(
        "--mend", type=Path, help="folder for a fixed copy of the package: rerun the breaking cases before and after"
    )
    parser.add_argument("--worker", nargs=3, metavar=("TYPE", "MODE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], Path(args.worker[2]))
        return 0
    if not transformers.__version__.startswith("5."):
        print(f"needs a transformers 5.x release in its own venv, found {transformers.__version__}", file=sys.stderr)
        return 2
    from transformers.models.auto.modeling_auto import MODEL_MAPPING_NAMES

    listed = Path(args.types[1:]).read_text() if args.types and args.types.startswith("@") else args.types
    types = listed.strip().split(",") if listed else sorted(MODEL_MAPPING_NAMES)
    types = (flagged_types(types) if args.flagged else types)[: args.limit]
    names = [f"{model_type}/{mode}" for model_type in types for mode in args.modes.split(",")]
    work = args.work or Path(tempfile.mkdtemp(prefix="graphmend-agreement-5x-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        found = pool.map(lambda name: run_case(name, work, args.timeout, args.existing), names)
        records = {name: record for name, record in zip(names, found) if record is not None}
    names = list(records)
    built = {name: record for name, record in records.items() if "error" not in record}
    failed = {name: record["error"] for name, record in records.items() if "error" in record}
    result = agreement.agreement(built, family_of=lambda name: name.rsplit("/", 1)[0])
    print(
        f"transformers {transformers.__version__}, torch {torch.__version__}: "
        f"{len({n.rsplit('/', 1)[0] for n in built})} architectures ran "
        f"({len(built)} of {len(names)} cases); records in {work}\n"
    )
    agreement.report(result)
    print(
        "\ncases that could not be built or run:",
        *[f"{n}: {e}" for n, e in sorted(failed.items())] or ["none"],
        sep="\n- ",
    )
    mended = mend(built, work, args.mend, args.jobs, args.timeout) if args.mend else []
    if args.json:
        args.json.write_text(
            json.dumps(
                {"result": result, "failed": failed, "records": records, "mended": mended}, indent=1, default=list
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
