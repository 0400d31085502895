"""Lightning-like fit loop calling a compiled training_step(batch, batch_idx) over a DataLoader."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

class LitClassifier(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(12, 48), nn.ReLU(), nn.Dropout(0.1))
        self.classifier = nn.Linear(48, num_classes)

    def forward(self, x):
        return self.classifier(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        acc = (logits.argmax(-1) == y).float().mean()
        return {"loss": loss, "acc": acc}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

class MiniTrainer:
    def __init__(self, max_epochs=3):
        self.max_epochs = max_epochs
        self.global_step = 0

    def fit(self, module, train_dataloader):
        optimizer = module.configure_optimizers()
        step_fn = torch.compile(module.training_step, backend="eager")
        module.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_dataloader):
                out = step_fn(batch, batch_idx)
                optimizer.zero_grad()
                out["loss"].backward()
                optimizer.step()
                self.global_step += 1
            print(f"epoch {epoch} step {self.global_step} acc {out['acc'].item():.3f}")

ds = TensorDataset(torch.randn(128, 12), torch.randint(0, 4, (128,)))
MiniTrainer().fit(LitClassifier(), DataLoader(ds, batch_size=16, shuffle=True))
