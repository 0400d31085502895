"""A message kept in the graph behaves like the original wherever models train (issue 67).

The fourth review found the ordered-effect operator of issue 50 failing where models train: a
compiled DDP model did not compile, inductor's FX graph cache skipped every graph that held it, a
message after a fused kernel raised UnboundLocalError under inductor, FakeTensorMode and the meta
device wrote nothing, `torch.func` raised, `torch.fx.symbolic_trace` recorded it, a frame Dynamo
runs eagerly compiled the helper as frames of their own, and the operator's name changed with every
process. `benchmarks/message_contexts.py` runs one program and its fix in each of those contexts,
each in a fresh process of this interpreter; here every one must write the original's messages and
return its values, and the fixed graph must be loaded from inductor's cache in a second process.
The contexts that compile with inductor twice per form (training, eval) are the full mode's: the
other inductor tests compile the operator already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FULL, ROOT

pytest.importorskip("torch")
sys.path.insert(0, str(ROOT / "benchmarks"))

import message_contexts  # noqa: E402

CONTEXTS = [
    "pending-eval",  # case 3: a message after a fused kernel, inductor under no_grad
    "ddp",  # case 1: torch.compile(DDP(model)), two ranks on gloo
    "cache",  # case 2: a second process on a warm inductor cache
    "fake",  # cases 4 and 15
    "meta",
    "func-grad",  # case 13
    "func-vmap",
    "symbolic-trace",  # case 14
    "eager-frame",  # case 5
    "names",  # the operator's name, the same in every process
]
if FULL:
    CONTEXTS += ["compile-eager-train", "compile-aot-train", "compile-inductor-train", "inductor-eval", "pending-train"]


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, object]]]:
    out = tmp_path_factory.mktemp("message_contexts") / "result.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "message_contexts.py"), "--only", ",".join(CONTEXTS)]
        + ["--json", str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (result,) = json.loads(out.read_text(encoding="utf-8"))
    return result["rows"]


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_message_kept_in_the_graph_writes_what_the_original_writes(
    measured: dict[str, dict[str, dict[str, object]]], context: str
) -> None:
    row = measured[context]
    seen = message_contexts.cell(row["original"], row["fixed"], context)
    assert seen.startswith("same"), f"{context}: {seen}"


def test_the_fixed_graph_is_loaded_from_a_warm_inductor_cache(
    measured: dict[str, dict[str, dict[str, object]]],
) -> None:
    """Case 2: the graph holding the messages is cached like any other (the ordered effect's
    `with_effects` was never cacheable: every process compiled it from scratch)."""
    info = measured["cache"]["fixed"]["info"]
    assert isinstance(info, dict) and info["bypass"] == 0 and info["fxgraph hit"] >= 1, info
