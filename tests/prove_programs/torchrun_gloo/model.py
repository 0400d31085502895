import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.linear(x)
        if y.sum() > 0:
            y = y * 0.5
        else:
            y = y * 2
        return y
