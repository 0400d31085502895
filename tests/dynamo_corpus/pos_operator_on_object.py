"""Operators on objects of a class of this file: Dynamo runs the class's method for `+`, `*`, `-a`
and comparisons, but torch 2.11 to 2.13 cannot trace `a @ b` or `~a` on such an object ("Failed to
trace builtin operator `matmul`", gb0059; after the held-out program h06, issue 56)."""
import torch


class Vector2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector2(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vector2(self.x * k, self.y * k)

    def __neg__(self):
        return Vector2(-self.x, -self.y)

    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y

    def __invert__(self):
        return Vector2(self.y, self.x)


@torch.compile(backend="eager")
def energy(vx, vy):
    vel = Vector2(vx, vy)
    vel = -(vel + vel * 0.5)
    return 0.5 * (vel @ vel)  # dynamo: break


@torch.compile(backend="eager")
def swapped(vx, vy):
    vel = ~Vector2(vx * 2, vy)  # dynamo: break
    return vel.x - vel.y


@torch.compile(backend="eager")
def product(a, b):
    return (a @ b).sum()


def run(x):
    return energy(x, x + 1).sum() + swapped(x, -x).sum() + product(x, x)


ENTRY = run
INPUTS = [(torch.arange(3.0),)]
