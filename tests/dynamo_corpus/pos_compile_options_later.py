"""Options bound once and applied later: `compile_fn = torch.compile(**opts)`, then `compile_fn(f)`,
as a call and as a decorator."""
import logging

import torch

logger = logging.getLogger(__name__)
opts = dict(backend="eager", dynamic=False)
compile_fn = torch.compile(**opts)


def _step(x):
    logger.info("step on %s", x.shape)  # dynamo: break
    return x * 2


step = compile_fn(_step)


@compile_fn
def settle(x):
    total = x.sum().item()  # dynamo: break
    return x - total / x.numel()


def run(x):
    return step(x) + settle(x)


ENTRY = run
INPUTS = [(torch.arange(1.0, 4.0),)]
