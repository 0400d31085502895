"""The module-level function `logging.warning(...)`; Dynamo breaks inside the logging module."""
import logging

import torch


@torch.compile(backend="eager")
def resize(x):
    h = x * 2
    logging.warning("resizing input of %d elements", 4)  # dynamo: break
    return h - 1


ENTRY = resize
INPUTS = [
    (torch.ones(4),),
]
