"""Module logger: `logger = logging.getLogger(__name__)` then `logger.warning(...)`."""
import logging

import torch

logger = logging.getLogger(__name__)


@torch.compile(backend="eager")
def prune(x):
    h = x.relu()
    logger.warning("skipping %s layers", 3)  # dynamo: break
    return h + 1


ENTRY = prune
INPUTS = [
    (torch.tensor([1.0, -1.0]),),
]
