import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x, scale: int):
        y = self.linear(x)
        if y.abs().sum() >= 0:
            y = y * 2
        else:
            y = y * scale
        return y
