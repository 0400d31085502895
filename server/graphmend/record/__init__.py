"""Run-time truth: what torch.compile met in a real run, recorded at the user's lines.

- `trace`: torch's structured-trace records normalised into events (graph breaks, recompiles,
  compile failures, CUDA-graph skips), each with the frames that led there;
- `log`: one process's events as JSON Lines, written as they come, deduplicated;
- `handler`: the recorder in the user's process (a handler on `torch.__trace`) and `recording()`;
- `runs`: where runs are kept (`.graphmend/runs/` under the project root) and reading one back;
- `runner`: `graphmend record -- COMMAND` (the recorder in every Python process through
  `boot/sitecustomize.py`) and `--import-trace` for a TORCH_TRACE folder from elsewhere.

Nothing here imports torch: it reads what torch logs.
"""
