"""A convergence check that a benchmark cannot fake: scikit-learn's digits (1797 8x8 images, Debian's
python3-sklearn) learnt by a small MLP under DDP for a fixed number of steps, then its accuracy on held-out
images.

    ddl run -- python3 -m ddl_torch.digits --steps 300 --comm ddl --compression powersgd:rank=4 [--json]

--compression may be repeated: one job trains once per value, each from the same initial parameters.

--comm ddl: DDP with ddl_torch's hook (--compression none, fp16, powersgd:..., topk:...); gloo: DDP on the
Gloo process group, with --compression none, or PyTorch's own hooks fp16 and powersgd:rank=R (as in
ddl_torch.bench).
Every rank trains on its own shard of the 1400 training images (the same split and order on every run),
then prints its parameter digest; rank 0 prints the final loss, the accuracy on the other 397 images and
the bytes this rank sent per step (ddl's hook: counted by libddlcomm).
--check-resume K: at step K the model, optimizer and hook state are saved; after the last step they are
restored and steps K.. run again, and each rank prints whether it ended with the same parameters.
"""
import argparse
import hashlib
import io
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

from ddl_torch.bench import bucket_cap_mb, register_hook


def digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def load_digits():
    from sklearn.datasets import load_digits as sk_load

    d = sk_load()
    x = torch.tensor(d.data, dtype=torch.float32) / 16.0
    y = torch.tensor(d.target, dtype=torch.long)
    order = torch.randperm(len(y), generator=torch.Generator().manual_seed(1234))
    x, y = x[order], y[order]
    return (x[:1400], y[:1400]), (x[1400:], y[1400:])


def train(a, compression, data, rank, world):
    """One training run from the same initial parameters; rank 0's result (accuracy, loss, bytes)."""
    (x, y), (x_test, y_test) = data
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
    # Small buckets, so the hook sees several (and DDP's rebuild after the first step).
    ddp = DDP(model, bucket_cap_mb=bucket_cap_mb(a.comm, compression, default=0.02))
    hook = register_hook(ddp, a.comm, compression)[1]
    opt = torch.optim.SGD(ddp.parameters(), lr=a.lr, momentum=0.9)

    def step(s):
        i = (s * a.batch) % (len(y) - a.batch + 1)
        opt.zero_grad()
        loss = F.cross_entropy(ddp(x[i:i + a.batch]), y[i:i + a.batch])
        loss.backward()
        opt.step()
        return loss.item()

    saved = None
    sent0 = hook.bytes_sent() if hook is not None else 0
    for s in range(a.steps):
        if a.check_resume and s == a.check_resume:
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(),
                        "hook": hook.state_dict() if hook is not None else {}}, buf)
            saved = buf.getvalue()
        loss = step(s)
    sent = (hook.bytes_sent() - sent0) / a.steps if hook is not None else 0
    with torch.no_grad():
        accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
    final = digest(model)
    print(f"rank {rank} {compression} parameters {final}", flush=True)

    if saved is not None:
        state = torch.load(io.BytesIO(saved))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        if hook is not None:
            hook.load_state_dict(state["hook"])
        for s in range(a.check_resume, a.steps):
            step(s)
        print(f"rank {rank} {compression} resumed from step {a.check_resume}: "
              f"{'same parameters' if digest(model) == final else 'different parameters'}", flush=True)
    if hook is not None:
        hook.close()
    return {"comm": a.comm, "compression": compression, "ranks": world, "steps": a.steps, "loss": loss,
            "accuracy": accuracy, "bytes_per_step": sent}


def main():
    p = argparse.ArgumentParser(prog="python3 -m ddl_torch.digits")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch", type=int, default=32, help="images per rank and step")
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--comm", choices=["ddl", "gloo"], default="ddl")
    p.add_argument("--compression", action="append", help="repeat for several runs in one job (default none)")
    p.add_argument("--check-resume", type=int, default=0, metavar="K")
    p.add_argument("--json", action="store_true")
    a = p.parse_args()

    dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    (x, y), test = load_digits()
    data = ((x[rank::world], y[rank::world]), test)
    for compression in a.compression or ["none"]:
        result = train(a, compression, data, rank, world)
        if rank == 0:
            if a.json:
                print(json.dumps(result), flush=True)
            else:
                print(f"digits on {world} ranks ({a.comm}, {compression}): accuracy {result['accuracy']:.4f}, "
                      f"loss {result['loss']:.4f}, {result['bytes_per_step']:.0f} bytes sent per step", flush=True)
        dist.barrier()  # the next hook bootstraps only after every rank closed this one
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
