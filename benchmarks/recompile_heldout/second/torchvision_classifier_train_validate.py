"""torchvision-style image classifier trained per epoch with model.train() and a validate() helper."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class SmallConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(16, num_classes))
    def forward(self, x):
        return self.classifier(self.features(x))

def train_one_epoch(model, criterion, optimizer, loader):
    model.train()
    for images, target in loader:
        loss = criterion(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

def validate(model, loader):
    model.eval()
    correct = total = 0
    with torch.inference_mode():
        for images, target in loader:
            correct += (model(images).argmax(1) == target).sum().item()
            total += target.numel()
    return correct / total

train_ds = TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 10, (64,)))
val_ds = TensorDataset(torch.randn(32, 3, 16, 16), torch.randint(0, 10, (32,)))
train_loader = DataLoader(train_ds, batch_size=16, shuffle=True)
val_loader = DataLoader(val_ds, batch_size=16)
model = torch.compile(SmallConvNet(), backend="eager")
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
for epoch in range(2):
    train_one_epoch(model, criterion, optimizer, train_loader)
    print(f"epoch {epoch} acc@1 {validate(model, val_loader):.3f}")
