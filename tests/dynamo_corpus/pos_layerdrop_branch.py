"""transformers 4.49.0 models/fsmt/modeling_fsmt.py:552: `if self.training and (p < layerdrop):
attn = None` else the layer runs and returns `(x, attn)`."""
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        return self.lin(x).tanh(), x.mean()


class Encoder(torch.nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(n))
        self.layerdrop = 0.5

    def forward(self, x):
        for encoder_layer in self.layers:
            dropout_probability = torch.rand([])
            if self.training and (dropout_probability < self.layerdrop):  # dynamo: break
                attn = None
            else:
                x, attn = encoder_layer(x)
        return x


ENTRY = torch.compile(Encoder().train(), backend="eager")
INPUTS = [(torch.ones(2, 3),), (-torch.ones(2, 3),), (torch.full((2, 3), 2.0),)]
