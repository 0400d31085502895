"""Reproduce the GraphMend paper's Table 2 on transformers 4.49.0 with tiny random models.

    python benchmarks/paper_table2.py [--keep DIR]

1. Copies the installed transformers package and runs `graphmend fix --unsafe-fixes` on the
   model files of the table (T5, Phi-3, Longformer) in the copy.
2. For each model and input, in a fresh process per variant (installed = before, copy = after):
   builds the model from a tiny config with seeded random weights (eval, no_grad), compiles it
   with a counting backend, runs it, and records the number of graphs, the graph-break sites
   (from Dynamo's graph_breaks log) and the logits.
3. Prints the table: graphs before → after, break sites left, logits equal.

Nothing is downloaded: configs are built in code.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MODEL_FILES = [
    "t5/modeling_t5.py",
    "phi3/modeling_phi3.py",
    "longformer/modeling_longformer.py",
    "qwen2_audio/modeling_qwen2_audio.py",
    "mixtral/modeling_mixtral.py",
]
CASES = ["t5", "phi3-long-seq8", "phi3-short-seq3", "longformer-seq7", "qwen2-audio", "mixtral-moe"]

WORKER = r'''
import json, logging, re, sys
import torch, torch._dynamo, torch._dynamo.testing
import transformers

case, out_path = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
sites = []


class Collect(logging.Handler):
    def emit(self, record):
        match = re.search(r"in user code at (\S+):(\d+)", record.getMessage())
        if match and "/transformers/" in match.group(1):
            sites.append(match.group(1).split("/transformers/")[-1] + ":" + match.group(2))


torch._logging.set_logs(graph_breaks=True)
breaks_logger = logging.getLogger("torch._dynamo.symbolic_convert.__graph_breaks")
breaks_logger.addHandler(Collect())
breaks_logger.propagate = False
transformers.logging.set_verbosity_error()

if case == "t5":
    config = transformers.T5Config(vocab_size=32, d_model=16, d_kv=4, d_ff=32, num_layers=2, num_decoder_layers=2,
                                   num_heads=2, feed_forward_proj="gated-gelu", decoder_start_token_id=0, pad_token_id=0)
    model = transformers.T5ForConditionalGeneration(config)
    inputs = dict(input_ids=torch.randint(1, 32, (1, 6)), decoder_input_ids=torch.randint(1, 32, (1, 4)))
elif case.startswith("phi3"):
    seq = 8 if "seq8" in case else 3
    config = transformers.Phi3Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                                     original_max_position_embeddings=4, pad_token_id=0,
                                     rope_scaling={"type": "longrope", "short_factor": [1.0] * 4, "long_factor": [2.0] * 4})
    model = transformers.Phi3ForCausalLM(config)
    inputs = dict(input_ids=torch.randint(1, 32, (1, seq)))
elif case == "longformer-seq7":
    config = transformers.LongformerConfig(vocab_size=32, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                           intermediate_size=32, attention_window=[4, 4], max_position_embeddings=64,
                                           pad_token_id=1)
    model = transformers.LongformerModel(config)
    inputs = dict(input_ids=torch.randint(2, 32, (1, 7)))
elif case == "qwen2-audio":
    audio = transformers.Qwen2AudioEncoderConfig(num_mel_bins=8, encoder_layers=1, encoder_attention_heads=2,
                                                 encoder_ffn_dim=32, d_model=16, max_source_positions=8)
    text = transformers.Qwen2Config(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    model = transformers.Qwen2AudioForConditionalGeneration(
        transformers.Qwen2AudioConfig(audio_config=audio, text_config=text, audio_token_index=50))
    ids = torch.tensor([[1, 2] + [50] * 4 + [3, 4]])  # 16 mel frames -> 4 audio tokens (expanded inputs)
    inputs = dict(input_ids=ids, attention_mask=torch.ones_like(ids), input_features=torch.randn(1, 8, 16),
                  feature_attention_mask=torch.ones(1, 16, dtype=torch.long))
elif case == "mixtral-moe":
    config = transformers.MixtralConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                        num_attention_heads=2, num_key_value_heads=2, num_local_experts=4,
                                        num_experts_per_tok=2, max_position_embeddings=32, pad_token_id=0)
    model = transformers.MixtralForCausalLM(config)
    inputs = dict(input_ids=torch.randint(1, 32, (1, 6)))
else:
    raise SystemExit(f"unknown case {case}")

model.eval()
counter = torch._dynamo.testing.CompileCounter()
compiled = torch.compile(model, backend=counter)
with torch.no_grad():
    eager = model(**inputs)
    torch._dynamo.reset()
    output = compiled(**inputs)
first = output[0] if isinstance(output, tuple) else (output.logits if hasattr(output, "logits") else output.last_hidden_state)
reference = eager[0] if isinstance(eager, tuple) else (eager.logits if hasattr(eager, "logits") else eager.last_hidden_state)
torch.save(first, out_path + ".pt")
json.dump({"graphs": counter.frame_count, "sites": sorted(set(sites)),
           "compiled_equals_eager": bool(torch.allclose(first, reference, atol=1e-6)),
           "transformers": transformers.__file__}, open(out_path, "w"))
'''


def run_case(case: str, pythonpath: str | None, out: Path) -> dict:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    worker = out.parent / "worker.py"
    worker.write_text(WORKER)
    subprocess.run([sys.executable, str(worker), case, str(out)], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return json.loads(out.read_text())


def main() -> int:
    import torch
    import transformers

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="folder for the fixed copy and outputs (default: a temp dir)")
    args = parser.parse_args()
    if transformers.__version__ != "4.49.0":
        print(f"needs transformers==4.49.0 (the paper's breaks), found {transformers.__version__}", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="graphmend-table2-"))
    work.mkdir(parents=True, exist_ok=True)
    copy_root = work / "site"
    installed = Path(transformers.__file__).parent
    if not (copy_root / "transformers").exists():
        shutil.copytree(installed, copy_root / "transformers", ignore=shutil.ignore_patterns("__pycache__"))
    targets = [str(copy_root / "transformers" / "models" / f) for f in MODEL_FILES]
    fix = subprocess.run([sys.executable, "-m", "graphmend", "fix", "--unsafe-fixes", *targets],
                         capture_output=True, text=True)
    print(fix.stdout.strip())
    rows = []
    for case in CASES:
        before = run_case(case, None, work / f"{case}.before.json")
        after = run_case(case, str(copy_root), work / f"{case}.after.json")
        assert "/site/transformers/" in after["transformers"], "the fixed copy was not imported"
        same = torch.equal(torch.load(work / f"{case}.before.json.pt"), torch.load(work / f"{case}.after.json.pt"))
        rows.append((case, before, after, same))
    print()
    print("| model / input | graphs before | graphs after | break sites before | break sites left | fixed % | logits equal |")
    print("|---|---:|---:|---|---|---:|---|")
    for case, before, after, same in rows:
        fixed = 100 * (len(before["sites"]) - len(after["sites"])) / len(before["sites"]) if before["sites"] else 100.0
        print(f"| {case} | {before['graphs']} | {after['graphs']} | {', '.join(before['sites']) or '—'} "
              f"| {', '.join(after['sites']) or '—'} | {fixed:.0f}% | {'yes' if same else 'NO'} |")
    return 0 if all(row[3] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
