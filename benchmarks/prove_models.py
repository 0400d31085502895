"""`graphmend fix --prove` on tiny-config training scripts of real models (issue 52).

For BART, Whisper and T5 of the installed transformers (4.49.0 here), a user-style script trains a
few steps with AdamW (LayerDrop on, `use_cache=True` with labels, T5 with gradient checkpointing), then runs a float16 forward in eval (the fp16 clamp). Each is run through

    graphmend fix --prove --unsafe-fixes --diff <the model's modeling file> -- python train.py

(`--diff`: nothing is written into site-packages). The script prints each fix's verdict, with what
differed, and the graphs before and with the proved fixes, as the proof record has them.

    python benchmarks/prove_models.py [bart whisper t5] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import transformers

COMMON = """\
import copy

import torch
import transformers

{build}
model.train()
compiled = torch.compile(model, backend="eager")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(4):
    out = compiled(**{train_inputs})
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {{step}} loss {{out.loss.item():.6f}}")
model.eval()
half = torch.compile(copy.deepcopy(model).half(), backend="eager")
with torch.no_grad():
    logits = half(**{eval_inputs}).logits
print("fp16 eval", logits.float().abs().mean().item())
"""

MODELS = {
    "bart": (
        "bart/modeling_bart.py",
        """config = transformers.BartConfig(
    vocab_size=64, d_model=16, encoder_layers=3, decoder_layers=3, encoder_attention_heads=2,
    decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=64,
    encoder_layerdrop=0.3, decoder_layerdrop=0.3, pad_token_id=1, bos_token_id=0, eos_token_id=2,
    decoder_start_token_id=2,
)
model = transformers.BartForConditionalGeneration(config)""",
        "dict(input_ids=torch.randint(3, 64, (2, 12)), labels=torch.randint(3, 64, (2, 8)), use_cache=True)",
        "dict(input_ids=torch.randint(3, 64, (2, 12)), decoder_input_ids=torch.randint(3, 64, (2, 8)))",
    ),
    "whisper": (
        "whisper/modeling_whisper.py",
        """config = transformers.WhisperConfig(
    vocab_size=64, num_mel_bins=8, d_model=16, encoder_layers=3, decoder_layers=3, encoder_attention_heads=2,
    decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_source_positions=16,
    max_target_positions=32, encoder_layerdrop=0.3, decoder_layerdrop=0.3, pad_token_id=1, bos_token_id=0,
    eos_token_id=2, decoder_start_token_id=2, suppress_tokens=None, begin_suppress_tokens=None,
)
model = transformers.WhisperForConditionalGeneration(config)""",
        "dict(input_features=torch.randn(2, 8, 32), labels=torch.randint(3, 64, (2, 8)), use_cache=True)",
        "dict(input_features=torch.randn(2, 8, 32).half(), decoder_input_ids=torch.randint(3, 64, (2, 8)))",
    ),
    "t5": (
        "t5/modeling_t5.py",
        """config = transformers.T5Config(
    vocab_size=64, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_heads=2, decoder_start_token_id=0,
    pad_token_id=0, eos_token_id=1,
)
model = transformers.T5ForConditionalGeneration(config)
model.gradient_checkpointing_enable()""",
        # (no head_mask: with one, 4.49.0's own forward raises NameError on its name-mangled
        # `__HEAD_MASK_WARNING_MSG`)
        "dict(input_ids=torch.randint(2, 64, (2, 12)), labels=torch.randint(2, 64, (2, 8)), use_cache=True)",
        "dict(input_ids=torch.randint(2, 64, (2, 12)), decoder_input_ids=torch.randint(2, 64, (2, 8)))",
    ),
}


def prove(name: str, keep: Path | None = None) -> dict:
    """Run the model's script through `fix --prove` in a fresh project; its proof record, with the time."""
    modeling, build, train_inputs, eval_inputs = MODELS[name]
    library = Path(transformers.__file__).parent / "models" / modeling
    with tempfile.TemporaryDirectory(prefix=f"prove-{name}-", dir=keep) as folder:
        project = Path(folder)
        if keep is not None:
            project = keep / name
            project.mkdir(parents=True)
        (project / "pyproject.toml").write_text("[project]\nname = 'p'\n", encoding="utf-8")
        script = COMMON.format(build=build, train_inputs=train_inputs, eval_inputs=eval_inputs)
        (project / "train.py").write_text(script, encoding="utf-8")
        started = time.monotonic()
        plain = subprocess.run([sys.executable, "train.py"], cwd=project, capture_output=True, text=True)
        plain_seconds = time.monotonic() - started
        if plain.returncode:
            raise SystemExit(f"{name}: the script fails as it is:\n{plain.stderr[-2000:]}")
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "graphmend", "fix", "--prove", "--unsafe-fixes", "--diff", str(library), "--"]
            + [sys.executable, "train.py"],
            cwd=project,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - started
        if done.returncode:
            raise SystemExit(f"{name}: fix --prove failed:\n{done.stderr[-3000:]}")
        (record_file,) = (project / ".graphmend" / "proofs").glob("*/proof.json")
        record = json.loads(record_file.read_text(encoding="utf-8"))
        record["seconds"] = round(seconds, 1)
        record["plain_seconds"] = round(plain_seconds, 1)
        record["report"] = done.stdout
        return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help=f"of {', '.join(MODELS)} (default: all)")
    parser.add_argument("--json", type=Path, help="write the records to FILE")
    parser.add_argument("--keep", type=Path, help="make the projects (and their proofs) under DIR, and keep them")
    args = parser.parse_args()
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        parser.error(f"unknown models: {', '.join(unknown)}")
    records = {}
    print(f"transformers {transformers.__version__}")
    for name in args.models or list(MODELS):
        record = records[name] = prove(name, args.keep)
        print(f"\n## {name}: {len(record['fixes'])} fixes, {len(record['runs'])} runs, {record['seconds']} s")
        print(f"   (the script alone: {record['plain_seconds']} s; {record['steps']} steps, {record['calls']} calls)")
        print(f"   graphs: {record['graphs']['before']} before, {record['graphs']['after']} with the proved fixes")
        for fix in sorted(record["fixes"], key=lambda f: f["line"]):
            kind = "safe" if fix["applicability"] == "safe" else "unsafe"
            print(f"   {fix['line']:>5} {fix['code']} {kind:<6} {fix['function']:<40} {fix['verdict']}")
            for difference in fix["differences"][:2]:
                print(f"         {difference[:200]}")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
