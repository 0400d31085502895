"""Registered messages Dynamo still breaks at: a replayed `print` (registered with
`reorderable_logging_functions`) with a shape, a list or `file=` as an argument, a replayed
`warnings.warn` with a category, the module function `logging.info` when only `logging.Logger.info`
is ignored, and a logger method nobody registered."""
import logging
import sys
import warnings

import torch

logger = logging.getLogger(__name__)
torch._dynamo.config.reorderable_logging_functions.add(print)
torch._dynamo.config.reorderable_logging_functions.add(warnings.warn)
torch._dynamo.config.ignore_logger_methods = {logger.debug}
torch._dynamo.config.ignore_logging_functions.add(logging.Logger.info)


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("shape", y.shape)  # dynamo: break
    y = y + 1
    items = [1, 2]
    print("items", items)  # dynamo: break
    y = y + 1
    print("to stderr", file=sys.stderr)  # dynamo: break
    y = y + 1
    warnings.warn("careful", UserWarning)  # dynamo: break
    y = y + 1
    logging.info("module-level info")  # dynamo: break
    z = y + 1
    logger.warning("done")  # dynamo: break
    return z * 3


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
