"""NumPy values in compiled code are traced as tensors (torch._numpy), measured on torch 2.13: a
NumPy scalar kept on the module by `__init__` (jukebox's `self.width = np.prod(...)`), `np.prod` of
a shape (llava_next's patch check), and a NumPy scalar draw (wav2vec2-conformer's LayerDrop
`np.random.random()`, which breaks where it is drawn, so the `if` after it tests a Python float)."""
import numpy as np
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.width = np.prod((4, 2))
        self.max_numel = 3 * self.width

    def forward(self, x):
        if x.numel() > self.max_numel:  # dynamo: break
            x = x * 2
        if np.prod(x.shape) % 3 != 0:  # dynamo: break
            x = x + 1
        p = np.random.random()  # dynamo: break
        if not self.training or (p > 0.5):
            x = x - 1
        return x


np.random.seed(0)  # the same draws for the program and its rewritten copy
ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(4),), (torch.ones(30),)]
