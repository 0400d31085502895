"""A method picked with `getattr(self, "name")` (a constant name), directly and through a local: Dynamo
runs it, and breaks inside it."""
import torch


class Gate(torch.nn.Module):
    def forward(self, x):
        step = getattr(self, "scaled")
        x = step(x)
        return getattr(self, "shifted")(x)

    def scaled(self, x):
        if x.sum() > 0:  # dynamo: break
            x = x * 2
        return x

    def shifted(self, x):
        if x.mean() > 1:  # dynamo: break
            x = x - 1
        return x


ENTRY = torch.compile(Gate(), backend="eager", fullgraph=False)
INPUTS = [(torch.ones(3),), (-torch.ones(3),)]
