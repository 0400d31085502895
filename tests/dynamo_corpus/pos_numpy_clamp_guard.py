"""transformers 5.23.0 `models/wav2vec2/modeling_wav2vec2.py:_compute_mask_indices`: clamp span
indices that run past the sequence, guarded by a test of their maximum. The test of a NumPy value
breaks (traced as a tensor); the masked write alone changes nothing when no index is too large."""
import numpy as np
import torch


def span_mask(batch_size, sequence_length, starts, mask_length):
    idx = np.broadcast_to(np.asarray(starts)[None, :, None], (batch_size, len(starts), mask_length))
    idx = idx.reshape(batch_size, len(starts) * mask_length)
    idx = idx + np.broadcast_to(np.arange(mask_length)[None, None, :], (batch_size, len(starts), mask_length)).reshape(
        batch_size, len(starts) * mask_length
    )
    if idx.max() > sequence_length - 1:  # dynamo: break
        idx[idx > sequence_length - 1] = sequence_length - 1
    mask = np.zeros((batch_size, sequence_length), dtype=bool)
    np.put_along_axis(mask, idx, True, -1)
    return mask


class Model(torch.nn.Module):
    def __init__(self, starts):
        super().__init__()
        self.starts = starts

    def forward(self, h):
        mask = torch.tensor(span_mask(h.shape[0], h.shape[1], self.starts, 3), dtype=torch.bool)
        return h.masked_fill(mask, 0.0)


ENTRY = torch.compile(Model([1, 8]), backend="eager")
INPUTS = [(torch.ones(2, 10),), (torch.ones(2, 12),)]  # spans past the end, then none
