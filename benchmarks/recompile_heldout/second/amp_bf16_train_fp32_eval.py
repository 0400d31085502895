"""Mixed-precision (bfloat16 autocast) training with full-precision evaluation at the end of each epoch."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 8))
model = torch.compile(model, backend="eager")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train_x, train_y = torch.randn(128, 32), torch.randint(0, 8, (128,))
val_x, val_y = torch.randn(64, 32), torch.randint(0, 8, (64,))

def train_epoch():
    model.train()
    for i in range(0, 128, 32):
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            logits = model(train_x[i:i + 32])
            loss = F.cross_entropy(logits.float(), train_y[i:i + 32])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()

def evaluate():
    model.eval()
    total = 0.0
    with torch.no_grad():
        for i in range(0, 64, 32):
            total += F.cross_entropy(model(val_x[i:i + 32]), val_y[i:i + 32]).item()
    return total / 2

for epoch in range(3):
    tl = train_epoch()
    print(f"epoch {epoch} train {tl:.4f} val {evaluate():.4f}")
