"""transformers 4.49.0 models/big_bird/modeling_big_bird.py:1157-1159: BigBird's random attention
plan sizes a NumPy array with `np.sum(plan_num_rand_blocks[: max_plan_idx + 1])`. Dynamo traces NumPy
in compiled code as tensors (torch._numpy), so that sum is a tensor in the graph, even of a list of
Python ints, and a NumPy factory or a slice fed it reads its value ("Data dependent operator"); sizes
of Python ints trace."""
import numpy as np
import torch

PLAN = [1, 2]


class RandomPlan(torch.nn.Module):
    def forward(self, hidden, num_heads: int):
        fixed = np.zeros((num_heads, 3), dtype=np.int32)
        plan = np.zeros((num_heads, np.sum(PLAN[:2])), dtype=np.int32)  # dynamo: break
        blocks = np.array(PLAN) // 2
        steps = np.arange(blocks[1] + 1)  # dynamo: break
        head = hidden[: np.sum(PLAN)]  # dynamo: break
        return head.sum(), fixed, plan, steps


ENTRY = torch.compile(RandomPlan(), backend="eager")
INPUTS = [(torch.ones(4, 2), 2)]
