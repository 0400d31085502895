"""graphmend's findings against real Dynamo on a transformers 5.x release (issue 18, item 7).

    python -m venv /tmp/tf5venv
    /tmp/tf5venv/bin/pip install torch==2.13.0 transformers==5.23.0 -e .
    /tmp/tf5venv/bin/python benchmarks/agreement_5x.py [--types A,B] [--limit N] [--jobs N] [--json OUT]

Its own virtual environment, never the test one. Every architecture of the release's
`MODEL_MAPPING_NAMES` (or `--types`) is built tiny from its own default config
(`tiny_models.py`), in eval and in training, each in a fresh process: the eager forward is traced
with `sys.settrace` to record the lines it runs in `transformers/models/`, then a compiled forward
records Dynamo's break sites (graph_breaks log, counting backend). Recall, precision and the lists
of misses and unconfirmed findings are computed as in `agreement.py`. Architectures this cannot
build or feed are listed with the reason.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import torch
import torch._dynamo.testing
import transformers

sys.path.insert(0, str(Path(__file__).resolve().parent))
import agreement  # noqa: E402
import paper_table2  # noqa: E402
import tiny_models  # noqa: E402

MODES = ("eval", "train", "fp16")  # fp16: eval in float16
MEMORY_LIMIT = 6 << 30  # bytes of address space per worker


def worker(model_type: str, mode: str, out: Path) -> None:
    """Build, trace and compile one architecture in one mode; write its record to `out`."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))  # a config that did not shrink fails, not the machine
    torch.set_num_threads(1)
    transformers.logging.set_verbosity_error()
    sites = paper_table2.collect_break_sites()
    torch.manual_seed(0)
    model, inputs = tiny_models.build(model_type)
    torch.manual_seed(0)
    twin, _ = tiny_models.build(model_type)  # compiled apart: an eager call may change state (BigBird's attention type)
    train = mode == "train"
    if train and "use_cache" in inspect.signature(model.forward).parameters:
        inputs = dict(inputs, use_cache=False)
    if mode == "fp16":  # the float16 guards (clamps of infinities) run only here
        model.half()
        twin.half()
        inputs = {key: value.half() if torch.is_tensor(value) and value.is_floating_point() else value
                  for key, value in inputs.items()}
    model.train(train)
    twin.train(train)
    counter = torch._dynamo.testing.CompileCounter()
    compiled = torch.compile(twin, backend=counter)
    executed: dict[str, set[int]] = {}
    with torch.set_grad_enabled(train):
        sys.settrace(partial(paper_table2._trace_models, executed))
        try:
            torch.manual_seed(0)
            model(**inputs)
        finally:
            sys.settrace(None)
        torch.manual_seed(0)
        compiled(**inputs)
    out.write_text(json.dumps({
        "executed": {path: sorted(lines) for path, lines in executed.items()},
        "graphs": counter.frame_count, "reasons": sites,
        "sites": sorted(sites, key=lambda site: (site.rsplit(":", 1)[0], int(site.rsplit(":", 1)[1]))),
    }))


def run_case(name: str, work: Path, timeout: float, existing_only: bool = False) -> dict[str, Any] | None:
    """The record of one case: run in a fresh process, or read from `work` when an earlier run left it."""
    model_type, mode = name.rsplit("/", 1)
    out = work / f"{model_type}.{mode}.json"
    log = Path(f"{out}.log")
    if out.is_file():
        return json.loads(out.read_text())
    if existing_only:
        return None
    try:
        with log.open("w") as stderr:
            done = subprocess.run([sys.executable, __file__, "--worker", model_type, mode, str(out)],
                                  stdout=subprocess.DEVNULL, stderr=stderr, timeout=timeout)
    except subprocess.TimeoutExpired:
        record = {"error": f"timed out after {timeout:.0f} s"}
    else:
        if done.returncode == 0:
            return json.loads(out.read_text())
        record = {"error": paper_table2._exception(log.read_text(errors="replace")) or f"exit status {done.returncode}"}
    out.write_text(json.dumps(record))  # a failure is recorded too: a later run with --work reports it
    return record


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--types", help="comma-separated model types, or @FILE of them (default: every one of MODEL_MAPPING_NAMES)")
    parser.add_argument("--limit", type=int, help="the first N model types only")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=180)
    parser.add_argument("--json", type=Path, help="write the records and the result as JSON here")
    parser.add_argument("--work", type=Path, help="folder for the records; cases recorded there are not run again")
    parser.add_argument("--existing", action="store_true", help="only report the cases already recorded in --work")
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
    types = (listed.strip().split(",") if listed else sorted(MODEL_MAPPING_NAMES))[: args.limit]
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
    print(f"transformers {transformers.__version__}, torch {torch.__version__}: "
          f"{len({n.rsplit('/', 1)[0] for n in built})} architectures ran "
          f"({len(built)} of {len(names)} cases); records in {work}\n")
    agreement.report(result)
    print("\ncases that could not be built or run:", *[f"{n}: {e}" for n, e in sorted(failed.items())] or ["none"], sep="\n- ")
    if args.json:
        args.json.write_text(json.dumps({"result": result, "failed": failed, "records": records}, indent=1, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
