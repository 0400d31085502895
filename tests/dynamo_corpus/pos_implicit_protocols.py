"""The other protocols an expression calls implicitly: indexing (`__getitem__`), `len()`
(`__len__`), calling an object (`__call__`), `in` (`__contains__`), a truth test (`__bool__`), an
operator (`__add__`) and constructing an object (`__init__`). On objects of classes of this file
Dynamo runs each method and breaks inside it (issue 56)."""
import torch


class Table:
    def __getitem__(self, i):
        torch._dynamo.graph_break()  # dynamo: break
        return i * 2

    def __len__(self):
        torch._dynamo.graph_break()  # dynamo: break
        return 3

    def __call__(self, x):
        torch._dynamo.graph_break()  # dynamo: break
        return x + 1

    def __contains__(self, key):
        torch._dynamo.graph_break()  # dynamo: break
        return True


class Flag:
    def __bool__(self):
        torch._dynamo.graph_break()  # dynamo: break
        return True

    def __add__(self, other):
        torch._dynamo.graph_break()  # dynamo: break
        return other + 1


class Made:
    def __init__(self, x):
        torch._dynamo.graph_break()  # dynamo: break
        self.x = x


TABLE = Table()
FLAG = Flag()


def step(x):
    y = x + TABLE[1]
    y = y + len(TABLE)
    y = TABLE(y)
    if 3 in TABLE:
        y = y - 1
    if FLAG:
        y = y + 1
    y = FLAG + y
    return Made(y).x


ENTRY = torch.compile(step, backend="eager")
INPUTS = [(torch.arange(3.0),)]
