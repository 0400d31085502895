"""transformers 4.49.0 models/big_bird/modeling_big_bird.py:1270-1291: BigBird's random block plan
passes NumPy numbers (`plan_block_length[i]`, an element of a NumPy array) to a helper. Dynamo traces
NumPy as tensors, so in the helper they are data like any tensor: a NumPy factory sized by them, a
`range` over them and an `if` on them break (measured), though they are the helper's parameters."""
import numpy as np
import torch


def single_row(to_start_block_id, to_end_block_id):
    to_block_list = np.arange(to_start_block_id, to_end_block_id, dtype=np.int32)  # dynamo: break
    total = 0
    for i in range(to_end_block_id - to_start_block_id):  # dynamo: break
        total += i
    if to_end_block_id > 2:  # dynamo: break
        total += 1
    return to_block_list, total


def plan(x, lengths):
    plan_block_length = np.array(lengths) // 2
    row, total = single_row(plan_block_length[0], plan_block_length[1])
    return x + total, row


ENTRY = torch.compile(plan, backend="eager")
INPUTS = [(torch.ones(3), [2, 8])]
