"""transformers 5.23.0 `models/wav2vec2/modeling_wav2vec2.py:179` (SpecAugment's span starts):
`np.random.choice` breaks in every form, with a size, `replace=False` or `p=` (its sampling reads
tensor data under torch._numpy), not only as a scalar draw."""
import numpy as np
import torch


class Model(torch.nn.Module):
    def forward(self, h):
        starts = np.random.choice(np.arange(8), 3, replace=False)  # dynamo: break
        h = h + 1
        weights = np.random.choice(4, 2, p=[0.25] * 4)  # dynamo: break
        h = h * 2
        pair = np.random.choice(4, 2)  # dynamo: break
        return h, starts, weights, pair


np.random.seed(0)  # the same draws for the program and its rewritten copy
ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(2, 10),)]
