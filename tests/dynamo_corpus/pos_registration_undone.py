"""A registration undone later in the module: `print` added to `reorderable_logging_functions`, then
discarded; `warnings.warn` added, then the set replaced. Dynamo breaks at both calls again."""
import warnings

import torch

torch._dynamo.config.reorderable_logging_functions.add(print)
torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)
torch._dynamo.config.reorderable_logging_functions.discard(print)
torch._dynamo.config.reorderable_logging_functions = set()


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("step", y)  # dynamo: break
    z = y + 1
    warnings.warn("stepping")  # dynamo: break
    return z * 3


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
