"""Issue 42, class 9: a parameter reached through an alias, register_parameter, and a function argument."""
import torch


def scaled(x, w):
    if x.sum() > 0:  # dynamo: break
        x = x * w
    return x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gamma = torch.nn.Parameter(torch.full((3,), 2.0))
        self.register_parameter("beta", torch.nn.Parameter(torch.full((3,), 0.5)))
        self.w = torch.nn.Parameter(torch.full((3,), 3.0))

    def forward(self, x):
        g = self.gamma
        if x.mean() > 0:  # dynamo: break
            y = x * g
        else:
            y = x.relu()
        if x.max() > 1:  # dynamo: break
            y = y + self.beta
        return scaled(y, self.w)


ENTRY = torch.compile(Net(), backend="eager")
INPUTS = [(-torch.ones(3),)]
