"""Knowledge distillation from a frozen wide MLP teacher into a compiled small student with a fixed softmax temperature."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
CFG = dict(temperature=4.0, alpha=0.7, batch=64, steps=40, classes=10)

teacher = nn.Sequential(nn.Linear(32, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, CFG["classes"]))
teacher.eval()
for p in teacher.parameters():
    p.requires_grad_(False)
student = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, CFG["classes"]))
student_c = torch.compile(student, backend="eager")


@torch.compile(backend="eager")
def kd_loss(s_logits, t_logits, labels, T, alpha):
    soft = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean") * T * T
    hard = F.cross_entropy(s_logits, labels)
    return alpha * soft + (1 - alpha) * hard


opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=CFG["steps"])
for step in range(CFG["steps"]):
    x = torch.randn(CFG["batch"], 32)
    with torch.no_grad():
        t_logits = teacher(x)
    labels = t_logits.argmax(-1)
    s_logits = student_c(x)
    loss = kd_loss(s_logits, t_logits, labels, CFG["temperature"], CFG["alpha"])
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 10 == 0:
        print(f"step {step} lr {sched.get_last_lr()[0]:.4f} loss {loss.item():.4f}")
