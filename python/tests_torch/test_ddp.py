"""DistributedDataParallel on CPU with backend "collie": a few SGD steps whose parameters
match a single-process model trained on the whole global batch (each rank holds a slice),
and that are bitwise identical on every rank."""
import copy

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from conftest import size

B, D_IN, D_HID, STEPS, LR = 4, 8, 16, 4, 0.1


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(D_IN, D_HID), torch.nn.Tanh(),
                               torch.nn.Linear(D_HID, 1))


def batches(P):
    g = torch.Generator().manual_seed(1234)
    return [(torch.randn(P * B, D_IN, generator=g), torch.randn(P * B, 1, generator=g))
            for _ in range(STEPS)]


@pytest.mark.parametrize("bucket_cap_mb,as_view", [(25.0, False), (0.0005, True)],
                         ids=["one-bucket", "bucket-per-parameter-views"])
def test_ddp_matches_single_process(pg, bucket_cap_mb, as_view):
    rank, P = dist.get_rank(), size()
    ref = make_model(0)                       # rank 0's initial weights
    model = make_model(100 * rank)            # DDP broadcasts rank 0's at construction
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb, gradient_as_bucket_view=as_view)
    for p, q in zip(model.parameters(), ref.parameters()):
        assert torch.equal(p, q)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=LR)
    loss_fn = torch.nn.MSELoss()
    for X, Y in batches(P):
        mine = slice(rank * B, (rank + 1) * B)
        opt.zero_grad()
        loss_fn(ddp(X[mine]), Y[mine]).backward()   # DDP averages the gradients over ranks
        opt.step()
        ref_opt.zero_grad()
        loss_fn(ref(X), Y).backward()
        ref_opt.step()
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    everyone = [torch.empty_like(flat) for _ in range(P)]
    dist.all_gather(everyone, flat)
    for other in everyone:
        assert torch.equal(other, flat)


def test_ddp_no_sync_accumulates(pg):
    """no_sync(): gradients of the first micro-batch stay local and are reduced together
    with the second's (one allreduce for both)."""
    rank, P = dist.get_rank(), size()
    ref = make_model(0)
    model = copy.deepcopy(ref)
    ddp = DDP(model)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    (X1, Y1), (X2, Y2) = batches(P)[:2]
    mine = slice(rank * B, (rank + 1) * B)
    with ddp.no_sync():
        loss_fn(ddp(X1[mine]), Y1[mine]).backward()
    loss_fn(ddp(X2[mine]), Y2[mine]).backward()
    (loss_fn(ref(X1), Y1) + loss_fn(ref(X2), Y2)).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad * P, q.grad, rtol=1e-5, atol=1e-5)
