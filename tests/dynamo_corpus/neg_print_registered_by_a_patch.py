"""`print` and `warnings.warn` in the message set a config patch sets around the compile and the
call (`with torch._dynamo.config.patch(reorderable_logging_functions=...)`): Dynamo replays them
after the graph, no break (issue 56)."""
import warnings

import torch


def step(x):
    y = torch.relu(x)
    print("step", y)
    warnings.warn("stepping")
    return y + 1


def run(x):
    with torch._dynamo.config.patch(reorderable_logging_functions={print, warnings.warn}):
        return torch.compile(step, backend="eager")(x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
