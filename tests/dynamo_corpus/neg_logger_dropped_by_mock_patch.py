"""A logger's method in the dropped set for the compile, through `unittest.mock.patch.object` on
Dynamo's config: Dynamo leaves the call out, no break (issue 56)."""
import logging
from unittest import mock

import torch

logger = logging.getLogger(__name__)


def quiet(x):
    logger.info("quiet")
    return torch.relu(x) - 1


def run(x):
    with mock.patch.object(torch._dynamo.config, "ignore_logger_methods", {logger.info}):
        return torch.compile(quiet, backend="eager")(x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
