"""DINO-style multi-crop self-distillation where the number of local crops per step varies and crop outputs are passed as a list."""
import random
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
OUT = 64


@torch.compile(backend="eager")
def multicrop_loss(student_outs, teacher_out, center, t_s=0.1, t_t=0.04):
    t = F.softmax((teacher_out - center) / t_t, dim=-1)
    total = 0.0
    for s in student_outs:
        total = total + torch.sum(-t * F.log_softmax(s / t_s, dim=-1), dim=-1).mean()
    return total / len(student_outs)


student = nn.Sequential(nn.Linear(48, 128), nn.GELU(), nn.Linear(128, OUT))
teacher = nn.Sequential(nn.Linear(48, 128), nn.GELU(), nn.Linear(128, OUT)).requires_grad_(False)
teacher.load_state_dict(student.state_dict())
center = torch.zeros(OUT)
opt = torch.optim.AdamW(student.parameters(), lr=5e-4)

for step in range(12):
    images = torch.randn(32, 48)
    n_local = random.choice([2, 4, 6])
    local_crops = [images + 0.3 * torch.randn_like(images) for _ in range(n_local)]
    with torch.no_grad():
        t_out = teacher(images)
    loss = multicrop_loss([student(c) for c in local_crops], t_out, center)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        center = 0.9 * center + 0.1 * t_out.mean(0)
        for ps, pt in zip(student.parameters(), teacher.parameters()):
            pt.mul_(0.996).add_(ps, alpha=0.004)
    print(f"step {step} local_crops {n_local} loss {loss.item():.4f}")
