"""One program of `benchmarks/user_projects/` as a timed workload (its libraries unzipped in SITE):

    python benchmarks/record_overhead/user_program.py NAME SITE [STEPS]

One step is what `user_projects.py` runs: every batch in eval, then in training with a backward.
Prints one JSON line with the first step's time (the compiles) and the median of the next STEPS
(default 10), in wall time and in the process's CPU time (which other load on the machine moves less)."""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from user_projects import PROGRAMS, _run, load  # noqa: E402

module = load(PROGRAMS / f"{sys.argv[1]}.py", Path(sys.argv[2]))
model, batches = module.model, module.inputs()
times, cpu_times = [], []
for _ in range(1 + (int(sys.argv[3]) if len(sys.argv) > 3 else 10)):
    start, cpu_start = time.perf_counter(), time.process_time()
    _run(model, batches)
    times.append(time.perf_counter() - start)
    cpu_times.append(time.process_time() - cpu_start)
steady, steady_cpu = statistics.median(times[1:]), statistics.median(cpu_times[1:])
print(
    json.dumps(
        {
            "first_step_s": times[0],
            "first_step_cpu_s": cpu_times[0],
            "steady_step_s": steady,
            "steady_cpu_s": steady_cpu,
        }
    )
)
