"""minGPT-style Trainer class whose compiled training step scales the loss by a warmup factor."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class Trainer:
    def __init__(self, model, max_iters=12, warmup_steps=4, batch_size=8):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
        self.max_iters, self.warmup_steps, self.batch_size = max_iters, warmup_steps, batch_size
        self.step = 0

    @torch.compile(backend="eager")
    def train_step(self, x, y):
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        warm = min(1.0, (self.step + 1) / self.warmup_steps)
        return loss * warm

    def train(self):
        self.model.train()
        while self.step < self.max_iters:
            x = torch.randn(self.batch_size, 20)
            y = torch.randint(0, 5, (self.batch_size,))
            loss = self.train_step(x, y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if self.step % 4 == 0:
                print(f"iter {self.step}: loss {loss.item():.4f}")
            self.step += 1

model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
Trainer(model).train()
