# SPDX-License-Identifier: MIT
"""DistributedDataParallel training on the weft torch.distributed backend.

Every rank trains a replica of a small network on its shard of a synthetic
regression set; DDP averages the gradients with all_reduce over weft each
step (in several buckets, so several all_reduces are in flight). The same
training then runs again from the same start over Gloo (a second group of
the same ranks), and once more in one process on the whole set. At the end:
  - every replica holds bit for bit the same parameters (all_gather);
  - weft's replicas equal Gloo's (within float rounding: the two sum the
    ranks' gradients in their own orders; bitwise at 2 ranks, where the
    order cannot differ);
  - both equal the single process's parameters within rounding (the mean
    of the shards' mean gradients is the whole set's mean gradient).

    torchrun --standalone --nproc_per_node 2 --redirects 0:2 --tee 0:2 \\
        ddp_train.py      # or RANK & co. by hand (the two options: torch
                          # 1.13 on Python 3.11 cannot parse their default)
    RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \\
        python3 ddp_train.py & ...

Set LD_LIBRARY_PATH to weft's libfabric.so.1 (see python/README.md).
Exits 1 when a comparison fails.
"""
import argparse
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import weft.c10d  # noqa: F401 - registers the backend "weft"

FEATURES, HIDDEN, SAMPLES = 16, 64, 960


def data():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(SAMPLES, FEATURES, generator=g)
    w = torch.randn(FEATURES, 1, generator=g)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(SAMPLES, 1, generator=g)
    return x, y


def model():
    torch.manual_seed(1)
    return torch.nn.Sequential(torch.nn.Linear(FEATURES, HIDDEN),
                               torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, HIDDEN),
                               torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, 1))


def train(net, x, y, steps):
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss = None
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
    return float(loss)


def flat(net):
    return torch.cat([p.detach().reshape(-1) for p in net.parameters()])


def ddp_run(group, x, y, steps):
    # small buckets: DDP's reducer posts several all_reduces per step
    net = DDP(model(), process_group=group, bucket_cap_mb=0.01)
    loss = train(net, x, y, steps)
    return flat(net.module), loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()

    dist.init_process_group("weft", timeout=timedelta(seconds=120))
    rank, size = dist.get_rank(), dist.get_world_size()
    gloo = dist.new_group(backend="gloo")
    x, y = data()
    shard = slice(rank * SAMPLES // size, (rank + 1) * SAMPLES // size)

    p_weft, loss = ddp_run(None, x[shard], y[shard], args.steps)
    p_gloo, _ = ddp_run(gloo, x[shard], y[shard], args.steps)
    single = model()
    train(single, x, y, args.steps)
    p_single = flat(single)

    every = [torch.empty_like(p_weft) for _ in range(size)]
    dist.all_gather(every, p_weft)
    identical = all(torch.equal(e.view(torch.int32), p_weft.view(torch.int32))
                    for e in every)
    d_gloo = float((p_weft - p_gloo).abs().max())
    d_single = float((p_weft - p_single).abs().max())
    ok = identical and d_gloo <= 1e-5 and d_single <= 1e-4 and \
        (size > 2 or d_gloo == 0.0)
    print("%s - DDP over weft (%s), rank %d of %d, %d steps, loss %.5f: "
          "replicas %s; max |weft - gloo| %.3g; max |weft - one process| "
          "%.3g" % ("ok" if ok else "not ok",
                    dist.distributed_c10d._get_default_group().provider,
                    rank, size, args.steps, loss,
                    "bitwise identical" if identical else "DIFFER",
                    d_gloo, d_single), flush=True)
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
