#!/usr/bin/env python3
"""PyTorch DDP under `ddl run` (or torchrun, mpirun with the torch variables set), unchanged.

`ddl run -np 8 -- python3 pytorch_ddp.py --steps 100` sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT and NCCL_SOCKET_IFNAME; init_process_group("env://") reads them. NCCL on GPUs, Gloo otherwise.
`--hook ddl` (or `ddl-fp16`) makes DDP average its gradients with ddl's libddlcomm instead: the two lines
marked below are all it takes (`ddl run` puts the ddl_torch package on PYTHONPATH).

--model mlp (default) or a torchvision model (resnet18, resnet50, ...) on synthetic 32x32 images.
--save FILE: rank 0 writes the final parameters there (torch.save); every rank prints a digest of its own.
--save-grads FILE: rank 0 writes the gradients of the first step, as averaged across the ranks.
--checkpoint-every K: rank 0 writes a checkpoint (step, parameters, optimizer) every K steps to
$DDL_CHECKPOINT_DIR/step-NNNNNN.pt (the shared folder's checkpoints/<cluster>/ under `ddl run`), and every rank
starts from the newest there: `ddl run --max-restarts N` restarts a failed job from its last checkpoint.
Each step's batch then comes from the step's own seed, so a resumed run sees the batches an uninterrupted one
would have seen.
"""
import argparse
import hashlib
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def make_model(name):
    if name == "mlp":
        return nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)), (32,)
    import torchvision

    return getattr(torchvision.models, name)(num_classes=10), (3, 32, 32)


def digest(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--batch", type=int, default=64, help="per-rank batch")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--hook", choices=["none", "ddl", "ddl-fp16"], default="none")
    parser.add_argument("--save", default="")
    parser.add_argument("--save-grads", default="", help="rank 0 writes the averaged gradients of step 0 there")
    parser.add_argument("--fixed-batch", action="store_true", help="each rank trains on one batch, again and again")
    parser.add_argument("--checkpoint-every", type=int, default=0, help="steps between checkpoints (0: none)")
    parser.add_argument("--step-seconds", type=float, default=0.0, help="sleep this long after each step")
    args = parser.parse_args()

    use_cuda = torch.cuda.is_available()
    dist.init_process_group(backend="nccl" if use_cuda else "gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")

    torch.manual_seed(0)  # same initial weights everywhere (DDP also broadcasts them from rank 0)
    model, shape = make_model(args.model)
    model = model.to(device)
    ddp = DDP(model, device_ids=[local_rank] if use_cuda else None)
    if args.hook != "none":
        import ddl_torch  # the two lines that put DDP's gradients on libddlcomm

        state = ddl_torch.register(ddp, compression="fp16" if args.hook == "ddl-fp16" else None)
        if rank == 0:
            print(f"gradients through libddlcomm ({state.backend} backend)", flush=True)
    opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    ckpt = ""
    start = 0
    if args.checkpoint_every > 0:
        folder = os.environ.get("DDL_CHECKPOINT_DIR", "")
        if not folder:
            raise SystemExit("--checkpoint-every needs DDL_CHECKPOINT_DIR (ddl run sets it where a shared folder is)")
        ckpt = folder
        if rank == 0:
            os.makedirs(folder, exist_ok=True)
        dist.barrier()  # the folder exists for every rank
        names = sorted(n for n in os.listdir(folder) if n.startswith("step-") and n.endswith(".pt"))
        if names:
            saved = torch.load(os.path.join(folder, names[-1]))
            model.load_state_dict(saved["model"])
            opt.load_state_dict(saved["optimizer"])
            start = saved["step"]
            if rank == 0:
                print(f"resumed from step {start} (restart {os.environ.get('DDL_RESTART_COUNT', '0')})", flush=True)
    teacher = torch.Generator().manual_seed(1)
    w_true = torch.randn(shape[-1] if len(shape) == 1 else 3 * 32 * 32, 10, generator=teacher)

    data = torch.Generator().manual_seed(1000 + rank)  # each rank its own shard
    fixed = torch.randn(args.batch, *shape, generator=data)
    warmup = min(start + 2, args.steps - 1)  # steps left out of the throughput (allocation, first buckets)
    t0 = time.perf_counter()
    for step in range(start, args.steps):
        if step == warmup:
            t0 = time.perf_counter()
        if ckpt:  # the step's batch from the step's own seed: the same after a resume
            data = torch.Generator().manual_seed(1000 + rank + 100003 * step)
        x = fixed if args.fixed_batch else torch.randn(args.batch, *shape, generator=data)
        y = (x.flatten(1) @ w_true).argmax(dim=1)
        loss = nn.functional.cross_entropy(ddp(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()  # DDP averages the gradients across ranks here
        if step == 0 and args.save_grads and rank == 0:
            torch.save([p.grad.detach().cpu().clone() for p in model.parameters()], args.save_grads)
        opt.step()
        if rank == 0 and (step % 10 == 0 or step == args.steps - 1):
            print(f"step {step} loss {loss.item():.4f} (world size {world})", flush=True)
        if ckpt and rank == 0 and (step + 1) % args.checkpoint_every == 0:
            state = {"step": step + 1, "model": model.state_dict(), "optimizer": opt.state_dict()}
            path = os.path.join(ckpt, f"step-{step + 1:06d}.pt")
            torch.save(state, path + ".tmp")
            os.replace(path + ".tmp", path)  # a rank killed while writing leaves the last whole one
            print(f"checkpoint at step {step + 1}", flush=True)
        if args.step_seconds > 0:
            time.sleep(args.step_seconds)

    timed = args.steps - warmup if args.steps > start else 0
    if rank == 0 and timed > 0:
        seconds = time.perf_counter() - t0
        print(f"throughput {timed * args.batch * world / seconds:.1f} images/s, {1000 * seconds / timed:.1f} ms/step "
              f"(steps {warmup}-{args.steps - 1}, {world} ranks x batch {args.batch})", flush=True)
    print(f"rank {rank} parameters {digest(model)}", flush=True)
    if args.save and rank == 0:
        torch.save([p.detach().cpu() for p in model.parameters()], args.save)
    dist.barrier()  # no rank leaves while another still needs it
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
