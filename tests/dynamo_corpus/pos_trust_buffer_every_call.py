"""Issue 42, class 10: a buffer reassigned in a branch; merged, it is reassigned every call."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("peak", torch.zeros(3))

    def forward(self, x):
        if x.max() > self.peak.max():  # dynamo: break
            self.peak = x.detach().abs()
        return x * 2.0


ENTRY = torch.compile(Net(), backend="eager")
INPUTS = [(torch.ones(3),), (-torch.ones(3),)]
