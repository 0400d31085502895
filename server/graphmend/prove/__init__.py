"""`graphmend fix --prove -- COMMAND`: a fix is applied only when the user's own run shows it
changes nothing.

- `candidates`: the fixes to prove, each with the function it rewrites and hashes that tell when
  its proof goes stale; the rewritten text of a file for any subset of them;
- `serve` (in the command's processes): an import hook that serves the rewritten source in place
  of the file, the main script included, so paths and untouched line numbers stay the same;
- `probe` (in the command's processes): seeds, and what the run shows (text, log records,
  warnings, compiled calls' outputs, optimizer steps, graphs, exceptions, the lines reached);
- `compare`: what differs between two runs' observations, process by process;
- `session`: the runs (the original, the fixes, the bisection), the verdicts, the proof record;
- `records`: proof records under `.graphmend/proofs/`, read back by `check` and the editor.

The parts that run in the command's processes import no torch themselves: they act on it once the
command has imported it.
"""
