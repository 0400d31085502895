"""`@torch._dynamo.config.patch(reorderable_logging_functions={print})` above `@torch.compile`: the
patch holds whenever the compiled function runs, so Dynamo replays the print, no break (issue 56)."""
import torch


@torch._dynamo.config.patch(reorderable_logging_functions={print})
@torch.compile(backend="eager")
def step(x):
    y = torch.relu(x)
    print("step", y)
    return y + 1


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
