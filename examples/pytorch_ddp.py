#!/usr/bin/env python3
"""PyTorch DDP under `ddl run` (or torchrun, mpirun with the torch variables set), unchanged.

`ddl run -np 8 -- python3 pytorch_ddp.py --steps 100` sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT and NCCL_SOCKET_IFNAME; init_process_group("env://") reads them. NCCL on GPUs, Gloo otherwise.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=64, help="per-rank batch")
    args = parser.parse_args()

    use_cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if use_cuda else "gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")

    torch.manual_seed(0)  # same initial weights everywhere (DDP also broadcasts them from rank 0)
    model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
    ddp = DDP(model, device_ids=[local_rank] if use_cuda else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    teacher = torch.Generator().manual_seed(1)
    w_true = torch.randn(32, 10, generator=teacher)

    data = torch.Generator().manual_seed(1000 + rank)  # each rank its own shard
    for step in range(args.steps):
        x = torch.randn(args.batch, 32, generator=data)
        y = (x @ w_true).argmax(dim=1)
        loss = nn.functional.cross_entropy(ddp(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()  # DDP averages the gradients across ranks here
        opt.step()
        if rank == 0 and step % 10 == 0:
            print(f"step {step} loss {loss.item():.4f} (world size {world})", flush=True)

    dist.barrier()  # no rank leaves while another still needs it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
