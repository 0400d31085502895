import torch


class Scorer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    @torch.no_grad()
    def forward(self, x):
        y = self.linear(x)
        if y.mean() > 0:
            y = y * 2
        else:
            y = -y
        return y
