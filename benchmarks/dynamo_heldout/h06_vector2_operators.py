"""A Vector2 type with +, -, unary minus, scalar * and a dot-product @ drives one compiled
explicit-Euler step of a point mass under gravity and drag."""
import torch


class Vector2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vector2(self.x + other.x, self.y + other.y)

    def __neg__(self):
        return Vector2(-self.x, -self.y)

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, k):
        return Vector2(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y


@torch.compile(backend="eager")
def euler_step(px, py, vx, vy, dt):
    pos = Vector2(px, py)
    vel = Vector2(vx, vy)
    gravity = Vector2(torch.zeros_like(vx), -torch.ones_like(vy))
    vel = vel + dt * gravity
    drag = vel * 0.1
    pos = pos + vel * dt - drag
    energy = 0.5 * (vel @ vel)
    return pos.x, pos.y, energy


ENTRY = euler_step
INPUTS = [
    (torch.arange(4.0), torch.ones(4), torch.ones(4), -torch.ones(4), 0.1),
    (torch.ones(3), torch.zeros(3), -torch.ones(3), torch.ones(3), 0.5),
]
