"""A global step counter read inside compiled code: a global int is guarded on its value
(`G['global_step'] == 0`) and never made dynamic, so every step recompiles until the limit."""

import torch

global_step = 0


@torch.compile(backend="eager")
def warmup_scale(x):
    return x * min(1.0, (global_step + 1) / 10)  # recompile: number


x = torch.ones(4)
for _ in range(12):
    warmup_scale(x)
    global_step += 1
