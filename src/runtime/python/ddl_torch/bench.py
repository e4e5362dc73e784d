"""Synthetic-data training throughput of a torchvision model under DDP, the way Horovod's
pytorch_synthetic_benchmark measures it: one random batch of ImageNet-shaped images (3 x S x S, 1000
classes) per rank, reused every step; forward, backward (gradients averaged across the ranks), SGD step.

    python3 -m ddl_torch.bench --model resnet50 --batch 32 --steps 10 --warmup 2 --comm ddl [--json]

--comm: ddl (DDP with ddl_torch's hook over libddlcomm), gloo or nccl (DDP on that process group).
Rank 0 prints one JSON line (--json) or a sentence: ranks, images/s over all ranks and per rank, the mean
step time, and the step time of the same steps without gradient exchange (DDP's no_sync), whose
difference is the communication the backward pass did not hide.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def timed_steps(step, n, cuda):
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


def main():
    p = argparse.ArgumentParser(prog="python3 -m ddl_torch.bench")
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=32, help="images per rank and step")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--comm", choices=["ddl", "gloo", "nccl"], default="ddl")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    import torchvision

    cuda = torch.cuda.is_available()
    group = "nccl" if a.comm == "nccl" or (a.comm == "ddl" and cuda) else "gloo"
    dist.init_process_group(backend=group, init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(local_rank)

    torch.manual_seed(0)
    model = getattr(torchvision.models, a.model)(num_classes=1000).to(device)
    ddp = DDP(model, device_ids=[local_rank] if cuda else None)
    backend = group
    if a.comm == "ddl":
        import ddl_torch

        backend = "ddl/" + ddl_torch.register(ddp).backend
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.randn(a.batch, 3, a.image_size, a.image_size, device=device)
    target = torch.randint(0, 1000, (a.batch,), device=device)

    def step():
        opt.zero_grad()
        F.cross_entropy(ddp(data), target).backward()
        opt.step()

    def local_step():
        with ddp.no_sync():
            opt.zero_grad()
            F.cross_entropy(ddp(data), target).backward()

    for _ in range(a.warmup):
        step()
    step_s = timed_steps(step, a.steps, cuda)
    compute_s = timed_steps(local_step, max(1, min(a.steps, 3)), cuda)
    # Every rank's mean step; the slowest sets the pace.
    t = torch.tensor([step_s, compute_s], dtype=torch.float64, device=device)  # NCCL groups take CUDA tensors only
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    step_s, compute_s = t.tolist()
    if rank == 0:
        result = {
            "framework": "pytorch",
            "model": a.model,
            "comm": backend,
            "ranks": world,
            "batch": a.batch,
            "image_size": a.image_size,
            "samples_per_s": world * a.batch / step_s,
            "samples_per_s_rank": a.batch / step_s,
            "step_s": step_s,
            "compute_s": compute_s,
            "comm_exposed_s": max(0.0, step_s - compute_s),
        }
        if a.json:
            print(json.dumps(result), flush=True)
        else:
            print(f"{a.model} on {world} ranks ({backend}): {result['samples_per_s']:.1f} images/s, "
                  f"step {step_s * 1000:.1f} ms, without exchange {compute_s * 1000:.1f} ms", flush=True)
    dist.barrier()
    # Leave without tearing the process group down: a rank whose peers have already exited can block in
    # that teardown (seen now and then with Gloo at 3 ranks), and a benchmark has nothing left to save.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
