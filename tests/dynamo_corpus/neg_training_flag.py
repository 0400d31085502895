"""`self.training` in a module's forward is a static flag: no break."""
import torch


class NoisyBlock(torch.nn.Module):
    def forward(self, x):
        if self.training:
            x = x + 0.01 * torch.randn_like(x)
        else:
            x = x * 1.0
        return x.relu()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = NoisyBlock()
        self.dec = NoisyBlock().eval()

    def forward(self, x):
        return self.dec(self.enc(x))


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [
    (torch.ones(2),),
]
