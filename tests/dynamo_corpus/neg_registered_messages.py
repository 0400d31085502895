"""`print` and `warnings.warn` registered with `reorderable_logging_functions` (Dynamo replays them
after the graph), a logger's methods with `ignore_logger_methods` or `ignore_logging_functions`
(Dynamo drops them): no break at those calls."""
import logging
import warnings

import torch

logger = logging.getLogger(__name__)
torch._dynamo.config.reorderable_logging_functions.add(print)
torch._dynamo.config.reorderable_logging_functions.update({warnings.warn})
torch._dynamo.config.ignore_logger_methods = {logger.debug}
torch._dynamo.config.ignore_logging_functions.add(logging.Logger.info)


@torch.compile(backend="eager")
def step(x):
    y = x * 2
    print("step", y)
    print(f"step {y}", sep="")
    warnings.warn("stepping")
    logger.debug("step done")
    logger.info("on %s", y.shape)
    return y + 1


ENTRY = step
INPUTS = [(torch.arange(3.0),)]
