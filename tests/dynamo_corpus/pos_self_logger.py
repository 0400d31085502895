"""A logger stored on the module as `self.logger`."""
import logging

import torch


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.logger = logging.getLogger("corpus.encoder")
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        h = self.lin(x)
        self.logger.warning("encoder output computed")  # dynamo: break
        return h.relu()


ENTRY = torch.compile(Encoder(), backend="eager")
INPUTS = [
    (torch.ones(1, 2),),
]
