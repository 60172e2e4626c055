"""A user program, checked by ``mypy --strict --disallow-any-expr`` in tests/test_typing.py
(and run there too, so the types it states are the ones it gets). ``reveal_type`` lines are
compared with mypy's output; at run time they print the object's type."""
from __future__ import annotations

from typing import TYPE_CHECKING

import tensorlib
import tensorlib.nn.functional as F
from tensorlib import Tensor, nn, optim
from tensorlib.utils.data import DataLoader, TensorDataset

if not TYPE_CHECKING:
    import sys

    def reveal_type(obj):
        # at run time: the line and the object's type, which the test compares with mypy's
        line = sys._getframe(1).f_lineno
        print(f"REVEAL {line} {type(obj).__qualname__}")
        return obj


class Net(nn.Module):
    """Two linear layers and a dropout."""

    def __init__(self, n_in: int, n_hidden: int, n_out: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_out)
        self.drop = nn.Dropout(0.1)

    def forward(self, x: Tensor) -> Tensor:
        h = F.relu(self.fc1(x))
        return self.fc2(self.drop(h))


class Encoder(nn.Module):
    """An LSTM whose forward returns the outputs and the final hidden state."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(3, 4, batch_first=True)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        out, (h, c) = self.rnn(x)
        return out, h


def train(epochs: int) -> float:
    tensorlib.manual_seed(0)
    x = tensorlib.randn(32, 4)
    y = (x.sum(dim=1) > 0).long()
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    model = Net(4, 16, 2)
    opt = optim.Adam(model.parameters(), lr=1e-2)
    sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    total = 0.0
    for _ in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            logits = model(xb)
            loss = loss_fn(logits, yb)
            loss.backward()
            opt.step()
            total += float(loss.item())
        sched.step()
    assert sched.get_last_lr()[0] < 1e-2
    return total


def ops() -> None:
    a = tensorlib.arange(6.0).reshape(2, 3)
    b = tensorlib.ones(2, 3, dtype=tensorlib.float64)
    c = (a * 2 + b) @ b.t()
    values, indices = c.max(dim=1)
    s: tensorlib.Size = c.shape
    n: int = c.size(0)
    parts = tensorlib.split(a, 1)
    mask = a > 2.0
    with tensorlib.no_grad():
        d = tensorlib.where(mask, a, tensorlib.zeros_like(a)).sum()
    seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    out, h = Encoder()(tensorlib.zeros(2, 5, 3))
    reveal_type(c)
    reveal_type(values)
    reveal_type(s)
    reveal_type(n)
    reveal_type(parts)
    reveal_type(d.item())
    reveal_type(seq(a))
    reveal_type(h)
    reveal_type(model_dtype(Net(3, 2, 1)))


def model_dtype(m: nn.Module) -> tensorlib.dtype:
    p = next(m.parameters())
    return p.dtype


if __name__ == "__main__":
    ops()
    print(f"loss {train(2):.3f}")
