"""Vector2 values compare by their length via __lt__; a compiled steering helper keeps the
shorter of two candidate velocities and halves the other one otherwise."""
import torch


class Vector2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm(self):
        return torch.sqrt((self.x ** 2 + self.y ** 2).sum())

    def __lt__(self, other):
        return self.norm() < other.norm()

    def __truediv__(self, k):
        return Vector2(self.x / k, self.y / k)


@torch.compile(backend="eager")
def pick_shorter(ax, ay, bx, by):
    a = Vector2(ax, ay)
    b = Vector2(bx, by)
    if a < b:  # predicted: break
        chosen = a
    else:
        chosen = b / 2
    return chosen.x + chosen.y


ENTRY = pick_shorter
INPUTS = [
    (torch.ones(3), torch.zeros(3), 2 * torch.ones(3), torch.ones(3)),
    (torch.arange(4.0), torch.ones(4), torch.zeros(4), torch.ones(4)),
]
