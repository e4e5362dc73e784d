"""Synthetic-data training throughput of a torchvision model under DDP, the way Horovod's
pytorch_synthetic_benchmark measures it: one random batch of ImageNet-shaped images (3 x S x S, 1000
classes) per rank, reused every step; forward, backward (gradients averaged across the ranks), SGD step.

    python3 -m ddl_torch.bench --model resnet50 --batch 32 --steps 10 --warmup 2 --comm ddl [--json]

--comm: ddl (DDP with ddl_torch's hook over libddlcomm), gloo or nccl (DDP on that process group).
--compression: none; fp16 (ddl's fp16 hook, or PyTorch's fp16_compress_hook on gloo/nccl);
powersgd:rank=R (ddl's compressor, or PyTorch's powerSGD_hook at rank R with start_powerSGD_iter 2, the least
it takes with error feedback, in one DDP bucket: with several it aborts or hangs on Gloo); topk:ratio=F (ddl
only). Keep --warmup at 2 or more so that the timed steps
are compressed ones.
--data DIR (a dataset of python3 -m ddl_data) --data-format files|shards --data-workers W: the batches
come from that dataset through a DataLoader with W worker processes (decoded JPEGs, random crops of
--image-size), each rank reading its share, instead of one random batch; the step then includes waiting for
the input pipeline, and the difference to the synthetic run is that pipeline's cost.
Rank 0 prints one JSON line (--json) or a sentence: ranks, images/s over all ranks and per rank, the mean
step time, and the step time of the same steps without gradient exchange (DDP's no_sync), whose
difference is the communication the backward pass did not hide; bytes per step that rank 0 sent: counted
by libddlcomm (ddl), and on its network interface (every comm; all its traffic, with the TCP/IP headers).
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


class Progress:
    """Counts steps and, where on, writes "ddl-progress step K/T SAMPLES_PER_S" (over every rank, since the
    last line) to stderr at most once a second and after the last step (ddl bench train shows it while a run
    is long)."""

    def __init__(self, on, total, samples_per_step):
        self.on, self.total, self.per_step = on, total, samples_per_step
        self.done, self.said_at, self.said = 0, 0, time.monotonic()

    def counting(self, fn):
        def counted():
            fn()
            self.done += 1
            now = time.monotonic()
            if self.on and (self.done == self.total or now - self.said >= 1.0):
                rate = self.per_step * (self.done - self.said_at) / max(now - self.said, 1e-9)
                print(f"ddl-progress step {self.done}/{self.total} {rate:.1f}", file=sys.stderr, flush=True)
                self.said, self.said_at = now, self.done
        return counted


def interface_tx_bytes():
    """Bytes sent so far on this rank's interface (DDL_IFACE, else the busiest one but lo), from this network
    namespace's /proc/net/dev; None where it cannot be read."""
    try:
        rows = {}
        with open("/proc/net/dev") as f:
            for line in f.readlines()[2:]:
                name, _, rest = line.partition(":")
                rows[name.strip()] = int(rest.split()[8])
    except (OSError, ValueError, IndexError):
        return None
    iface = os.environ.get("DDL_IFACE")
    if iface in rows:
        return rows[iface]
    others = {k: v for k, v in rows.items() if k != "lo"}
    return max(others.values()) if others else None


def bucket_cap_mb(comm, compression, default=25):
    """DDP's bucket size for (comm, compression): PyTorch 1.13's powerSGD_hook on Gloo with several buckets
    aborts or hangs (its chained allreduces of one bucket and the next reach the ranks in different orders),
    so it gets one bucket, the way it runs there."""
    return 1024 if comm != "ddl" and compression.startswith("powersgd") else default


def register_hook(ddp, comm, compression):
    """Installs the hook for (comm, compression): ddl's hook and compressor, or on gloo/nccl PyTorch's own
    fp16_compress_hook or powerSGD_hook. Returns (label, ddl state or None)."""
    if comm == "ddl":
        import ddl_torch

        state = ddl_torch.register(ddp, compression=None if compression == "none" else compression)
        return "ddl/" + state.backend, state
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook

    if compression == "fp16":
        ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
    elif compression.startswith("powersgd"):
        opts = dict(kv.split("=", 1) for kv in compression.partition(":")[2].split(",") if kv)
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=int(opts.get("rank", 4)),
                                            start_powerSGD_iter=max(2, int(opts.get("start", 2))))
        ddp.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    elif compression != "none":
        raise SystemExit(f"--compression {compression}: with --comm {comm} only none, fp16 and powersgd "
                         f"(PyTorch's own hooks)")
    return comm, None


def main():
    p = argparse.ArgumentParser(prog="python3 -m ddl_torch.bench")
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=32, help="images per rank and step")
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--comm", choices=["ddl", "gloo", "nccl"], default="ddl")
    p.add_argument("--compression", default="none")
    p.add_argument("--data", help="a ddl_data dataset folder; default: one synthetic batch")
    p.add_argument("--data-format", choices=["files", "shards"], default="shards")
    p.add_argument("--data-workers", type=int, default=2)
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
    ddp = DDP(model, device_ids=[local_rank] if cuda else None, bucket_cap_mb=bucket_cap_mb(a.comm, a.compression))
    backend, hook = register_hook(ddp, a.comm, a.compression)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    data = torch.randn(a.batch, 3, a.image_size, a.image_size, device=device)
    target = torch.randint(0, 1000, (a.batch,), device=device)
    batches = None
    if a.data:
        from ddl_data.loaders import make_loader

        batches = iter(make_loader(a.data, a.data_format, a.batch, a.data_workers, rank, world, a.image_size,
                                   repeat=True))

    def step():
        nonlocal data, target
        if batches is not None:
            images, classes, _ = next(batches)
            data, target = images.to(device, non_blocking=True), classes.to(device, non_blocking=True)
        opt.zero_grad()
        F.cross_entropy(ddp(data), target).backward()
        opt.step()

    def local_step():
        with ddp.no_sync():
            opt.zero_grad()
            F.cross_entropy(ddp(data), target).backward()

    compute_steps = max(1, min(a.steps, 3))
    # DDL_PROGRESS=1 (ddl bench train sets it): rank 0 says its step on stderr.
    said = Progress(os.environ.get("DDL_PROGRESS") == "1" and rank == 0, a.warmup + a.steps + compute_steps,
                    a.batch * world)
    step, local_step = said.counting(step), said.counting(local_step)
    for _ in range(a.warmup):
        step()
    sent0, tx0 = (hook.bytes_sent() if hook else None), interface_tx_bytes()
    step_s = timed_steps(step, a.steps, cuda)
    sent = (hook.bytes_sent() - sent0) / a.steps if hook else None
    tx = interface_tx_bytes()
    tx = (tx - tx0) / a.steps if tx is not None and tx0 is not None else None
    compute_s = timed_steps(local_step, compute_steps, cuda)
    # Every rank's mean step; the slowest sets the pace.
    t = torch.tensor([step_s, compute_s], dtype=torch.float64, device=device)  # NCCL groups take CUDA tensors only
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    step_s, compute_s = t.tolist()
    if rank == 0:
        result = {
            "framework": "pytorch",
            "model": a.model,
            "comm": backend,
            "compression": a.compression,
            "input": f"{a.data_format}, {a.data_workers} workers" if a.data else "synthetic",
            "ranks": world,
            "batch": a.batch,
            "image_size": a.image_size,
            "samples_per_s": world * a.batch / step_s,
            "samples_per_s_rank": a.batch / step_s,
            "step_s": step_s,
            "compute_s": compute_s,
            "comm_exposed_s": max(0.0, step_s - compute_s),
            "bytes_per_step": sent,
            "iface_bytes_per_step": tx,
        }
        if a.json:
            print(json.dumps(result), flush=True)
        else:
            wire = f", {sent / 1e6:.2f} MB sent per step (libddlcomm)" if sent is not None else ""
            wire += f", {tx / 1e6:.2f} MB per step on the interface" if tx is not None else ""
            print(f"{a.model} on {world} ranks ({backend}, {a.compression}): {result['samples_per_s']:.1f} images/s, "
                  f"step {step_s * 1000:.1f} ms, without exchange {compute_s * 1000:.1f} ms{wire}", flush=True)
    dist.barrier()
    # Leave without tearing the process group down: a rank whose peers have already exited can block in
    # that teardown (seen now and then with Gloo at 3 ranks), and a benchmark has nothing left to save.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
