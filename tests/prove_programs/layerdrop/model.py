import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return x + self.linear(x).tanh()


class Encoder(torch.nn.Module):
    """LayerDrop as BART's encoder has it: in training, each layer is skipped with probability `layerdrop`."""

    def __init__(self, layers=4, layerdrop=0.5):
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer() for _ in range(layers))
        self.layerdrop = layerdrop

    def forward(self, x):
        for layer in self.layers:
            dropout_probability = torch.rand([])
            if self.training and dropout_probability < self.layerdrop:
                continue
            x = layer(x)
        return x
