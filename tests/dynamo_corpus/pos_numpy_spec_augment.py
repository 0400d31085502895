"""Modelled on transformers 4.49.0 `models/wav2vec2/modeling_wav2vec2.py:_compute_mask_indices`
(SpecAugment masking, called from the compiled forward in training): NumPy inside compiled code is
traced as tensors, so its `.item()` and a test of its values break like a tensor's."""
import numpy as np
import torch


def compute_mask(shape, mask_prob, mask_length):
    batch_size, sequence_length = shape
    epsilon = np.random.rand(1).item()  # dynamo: break
    num = int(mask_prob * sequence_length / mask_length + epsilon)
    idx = np.arange(num)[None, :, None] * mask_length + np.arange(mask_length)[None, None, :]
    idx = np.broadcast_to(idx, (batch_size, num, mask_length)).reshape(batch_size, num * mask_length)
    if idx.max() > sequence_length - 1:  # dynamo: break
        idx = np.minimum(idx, sequence_length - 1)
    mask = np.zeros((batch_size, sequence_length), dtype=bool)
    np.put_along_axis(mask, idx, True, -1)
    return mask


class Model(torch.nn.Module):
    def forward(self, h):
        mask = torch.tensor(compute_mask(h.shape, 0.5, 2), dtype=torch.bool)
        return h.masked_fill(mask, 0.0)


np.random.seed(0)  # the same draws for the program and its rewritten copy
ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(2, 10),)]
