"""torchtitan-style Trainer with a step counter, linear warmup scheduler and a compiled model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

class FeedForward(nn.Module):
    def __init__(self, dim=32, hidden=64):
        super().__init__()
        self.w1, self.w2, self.w3 = nn.Linear(dim, hidden), nn.Linear(hidden, dim), nn.Linear(dim, hidden)
    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))

class Trainer:
    def __init__(self, steps=15, warmup=5):
        self.model = nn.Sequential(nn.Embedding(100, 32), FeedForward(), nn.LayerNorm(32), nn.Linear(32, 100))
        self.model.compile(backend="eager")
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda s: min(1.0, (s + 1) / warmup))
        self.step, self.steps = 0, steps

    def next_batch(self):
        tokens = torch.randint(0, 100, (4, 17))
        return tokens[:, :-1], tokens[:, 1:]

    def train_step(self, inputs, labels):
        pred = self.model(inputs)
        loss = F.cross_entropy(pred.flatten(0, 1), labels.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.lr_scheduler.step()
        self.optimizer.zero_grad()
        return loss

    def train(self):
        while self.step < self.steps:
            self.step += 1
            loss = self.train_step(*self.next_batch())
            if self.step % 5 == 0:
                print(f"step {self.step} loss {loss.item():.3f} lr {self.lr_scheduler.get_last_lr()[0]:.2e}")

if __name__ == "__main__":
    Trainer().train()
