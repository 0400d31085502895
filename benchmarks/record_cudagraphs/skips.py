"""A training-style loop compiled for CUDA graphs whose graphs inductor keeps out of them.

`normalise_` changes its argument in place (a mutated input) and `pick` runs `torch.cond` (a control
flow operator): on a GPU, `graphmend record -- python skips.py` records one CUDA-graph skip for
each, at the compiled function's line (GM504), and `graphmend fix --unsafe-fixes` rewrites both
(GM403's copy, GM404's torch.where). Run by benchmarks/device_run.sh, not by the tests.
"""

import sys

import torch


@torch.compile(mode="reduce-overhead")
def normalise_(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x.div_(x.norm(dim=-1, keepdim=True) + 1e-6)
    return x @ w


@torch.compile(mode="reduce-overhead")
def pick(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.cond(x.sum() > 0, lambda a, b: a @ b, lambda a, b: a @ b.t(), (x, w))


def main() -> None:
    torch.manual_seed(0)
    w = torch.randn(64, 64, device="cuda")
    total = torch.zeros((), device="cuda")
    for _ in range(6):
        x = torch.randn(8, 64, device="cuda")
        total += normalise_(x.clone(), w).sum() + pick(x, w).sum()
    torch.cuda.synchronize()
    print(f"total {total.item():.6f}", file=sys.stderr)  # stdout is the recorder's JSON


if __name__ == "__main__":
    main()
