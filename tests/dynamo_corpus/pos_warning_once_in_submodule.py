"""transformers' `warning_once` in a submodule the compiled parent inlines (issue 54): a deferred
call would be dropped there; kept in the graph, it is written once, as the original writes it."""
import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x):
        logger.warning_once("Block runs without a cache; pass `use_cache=False` to silence this.")  # dynamo: break
        return self.lin(x).tanh()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(), Block())

    def forward(self, x):
        return self.blocks(x) * 2


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [
    (torch.ones(1, 2),),
    (torch.full((3, 2), -0.5),),
]
