"""torchvision 0.28.0 transforms: a warning under `torch.jit.is_scripting()` is dead code under Dynamo."""
import warnings

import torch


class Resize(torch.nn.Module):
    def forward(self, x):
        if torch.jit.is_scripting():
            warnings.warn("scripted resize")
        return x * 2


ENTRY = torch.compile(Resize(), backend="eager")
INPUTS = [(torch.ones(2, 3),)]
