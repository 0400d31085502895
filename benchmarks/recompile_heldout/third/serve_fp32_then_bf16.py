"""Inference server loop for a small transformer classifier: serve requests in fp32, then switch the model to bfloat16 to cut memory."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TextClassifier(nn.Module):
    def __init__(self, vocab=1000, d=64, n_cls=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.layer = nn.TransformerEncoderLayer(d, 4, 128, batch_first=True, dropout=0.0)
        self.cls = nn.Linear(d, n_cls)

    def forward(self, ids):
        return self.cls(self.layer(self.emb(ids)).mean(1))


model = TextClassifier().eval()
serve = torch.compile(model, backend="eager")


def handle(requests):
    with torch.no_grad():
        return serve(requests).float().softmax(-1)


for i in range(3):
    out = handle(torch.randint(0, 1000, (4, 24)))
    print(f"fp32 request {i} top {out.argmax(-1).tolist()}")

model.to(torch.bfloat16)
for i in range(3):
    out = handle(torch.randint(0, 1000, (4, 24)))
    print(f"bf16 request {i} top {out.argmax(-1).tolist()} dtype {next(model.parameters()).dtype}")
