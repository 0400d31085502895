"""transformers 4.49.0 models/big_bird/modeling_big_bird.py:1216 and :1272 (BigBird's random block
plan in training) and models/wav2vec2/modeling_wav2vec2.py:2257 (the CTC loss): a NumPy function
torch._numpy does not implement (`np.random.permutation`, gb0294), `int()` of a NumPy value
("torch.* op returned non-Tensor", gb0208), and a torch context manager Dynamo does not model
(`torch.backends.cudnn.flags`, gb0208; the rest of the frame then runs eagerly)."""
import numpy as np
import torch

PLAN = [1, 2]


def single_row(to_end_block_id: int):
    return np.random.permutation(np.arange(to_end_block_id))  # dynamo: break


def plan(x):
    count = int(np.sum(PLAN[:1]))  # dynamo: break
    return x + count, single_row(4)


def ctc(x):
    with torch.backends.cudnn.flags(enabled=False):  # dynamo: break
        y = x * 2
    return y


class Model(torch.nn.Module):
    def forward(self, x):
        y, row = plan(x)
        return ctc(y) + float(row.shape[0])


ENTRY = torch.compile(Model(), backend="eager")
INPUTS = [(torch.ones(3),)]
