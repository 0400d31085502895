import torch

from .checks import validate


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(8, 4)

    def forward(self, input_ids):
        input_ids = validate(input_ids)
        return self.embed(input_ids)
