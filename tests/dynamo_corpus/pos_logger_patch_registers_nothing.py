"""`ignore_logger_methods={None}` in a config patch around the compile registers nothing: the
logger's call still breaks (issue 56)."""
import logging

import torch

logger = logging.getLogger(__name__)


def noisy(x):
    logger.info("noisy")  # dynamo: break
    return torch.relu(x) + 3


with torch._dynamo.config.patch(ignore_logger_methods={None}):
    ENTRY = torch.compile(noisy, backend="eager")
INPUTS = [(torch.arange(3.0),)]
