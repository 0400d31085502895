"""A replayed `print` (registered with `reorderable_logging_functions`) still breaks when an argument is
a shape or a list; a logger method nobody registered still breaks."""
import logging

import torch

logger = logging.getLogger(__name__)
torch._dynamo.config.reorderable_logging_functions.add(print)
torch._dynamo.config.ignore_logger_methods = {logger.debug}


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("shape", y.shape)  # dynamo: break
    z = y + 1
    logger.warning("done")  # dynamo: break
    return z * 3


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
