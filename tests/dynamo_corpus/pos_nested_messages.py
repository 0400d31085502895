"""Messages in functions that compiled code calls, as in transformers 4.49.0
`modeling_flash_attention_utils.py:214` (`logger.warning_once` in a helper called from every
flash-attention forward) and a research helper printing a metric: Dynamo inlines the callee, and
a deferred call made there is never replayed (measured on torch 2.13), so the print is moved into
the graph (`torch._higher_order_ops.print`) and the logger call is refused."""
import logging

import torch

logger = logging.getLogger("corpus.nested")


def report(h):
    print("mean", h.mean())  # dynamo: break
    return h


def check_padding(ids):
    logger.warning("padding checked")  # dynamo: break
    return ids


class Block(torch.nn.Module):
    def forward(self, h):
        return report(h) * 2


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        x = check_padding(x)
        return self.block(x) + 1


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [
    (torch.ones(3),),
    (torch.arange(4.0),),
]
