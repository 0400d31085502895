"""transformers' `logging.get_logger(__name__)` with `logger.warning_once(...)`."""
import torch
from transformers.utils import logging

logger = logging.get_logger(__name__)


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gradient_checkpointing = True
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x, use_cache: bool):
        if self.gradient_checkpointing and use_cache:
            logger.warning_once("`use_cache=True` is incompatible with gradient checkpointing.")  # dynamo: break
            use_cache = False
        return self.lin(x).tanh(), use_cache


ENTRY = torch.compile(Stack(), backend="eager")
INPUTS = [
    (torch.ones(1, 2), True),
    (torch.ones(1, 2), False),
]
