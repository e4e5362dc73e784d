"""python3 -m ddl_data generate|bench: see the package's docstring."""
import argparse
import json
import os
import socket
import sys
import time

from . import generate as gen


def cmd_generate(a):
    formats = ["files", "shards"] if a.format == "both" else [a.format]
    t0 = time.perf_counter()
    m = gen.generate(a.out, a.images, a.classes, a.seed, formats, shards=a.shards,
                     log=lambda s: print(s, file=sys.stderr, flush=True))
    m["seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(m) if a.json else
          f"{a.out}: {m['images']} images, {m['classes']} classes, {', '.join(m['formats'])}, "
          f"{m['jpeg_bytes'] / 1e6:.1f} MB of JPEG, {m['seconds']} s", flush=True)


def cmd_bench(a):
    """One pass over this rank's share (files: rank::world of a seeded shuffle; shards: shards[rank::world]),
    through a DataLoader with --workers processes; every rank's images, bytes and seconds to rank 0."""
    import torch
    import torch.distributed as dist

    from .loaders import make_loader

    torch.set_num_threads(1)
    distributed = "WORLD_SIZE" in os.environ and "MASTER_ADDR" in os.environ
    if distributed:
        dist.init_process_group(backend="gloo", init_method="env://")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    if gen.read_manifest(a.data) is None:
        raise SystemExit(f"{a.data}: no {gen.MANIFEST}: not a ddl_data dataset (python3 -m ddl_data generate)")
    loader = make_loader(a.data, a.format, a.batch, a.workers, rank, world, a.image_size, not a.no_decode)
    if distributed:
        dist.barrier()  # every node starts reading at once
    images = nbytes = 0
    t0 = time.perf_counter()
    for _, _, sizes in loader:
        images += len(sizes)
        nbytes += int(sizes.sum())
    seconds = time.perf_counter() - t0
    mine = {"rank": rank, "host": socket.gethostname(), "images": images, "bytes": nbytes, "seconds": seconds}
    ranks = [None] * world
    if distributed:
        dist.all_gather_object(ranks, mine)
    else:
        ranks = [mine]
    if rank == 0:
        wall = max(r["seconds"] for r in ranks)  # the slowest rank ends the epoch
        total_images = sum(r["images"] for r in ranks)
        total_bytes = sum(r["bytes"] for r in ranks)
        for r in ranks:
            r["images_per_s"] = r["images"] / r["seconds"] if r["seconds"] > 0 else 0.0
            r["mb_per_s"] = r["bytes"] / 1e6 / r["seconds"] if r["seconds"] > 0 else 0.0
        result = {"format": a.format, "workers": a.workers, "decode": not a.no_decode, "ranks": world,
                  "images": total_images, "bytes": total_bytes, "seconds": wall,
                  "images_per_s": total_images / wall if wall > 0 else 0.0,
                  "mb_per_s": total_bytes / 1e6 / wall if wall > 0 else 0.0, "per_rank": ranks}
        print(json.dumps(result) if a.json else
              f"{world} rank(s), {a.format}, {a.workers} worker(s): {result['images_per_s']:.1f} images/s, "
              f"{result['mb_per_s']:.1f} MB/s", flush=True)
    if distributed:
        dist.barrier()
    sys.stdout.flush()
    os._exit(0)  # as ddl_torch.bench: nothing to tear down that a peer could block in


def main():
    p = argparse.ArgumentParser(prog="python3 -m ddl_data")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="write the dataset")
    g.add_argument("--out", required=True)
    g.add_argument("--images", type=int, default=1000)
    g.add_argument("--classes", type=int, default=10)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--shards", type=int, default=32, help="shard count (at most one image each)")
    g.add_argument("--format", choices=["files", "shards", "both"], default="both")
    g.add_argument("--json", action="store_true")
    b = sub.add_parser("bench", help="read-and-decode throughput of one pass, every rank at once")
    b.add_argument("--data", required=True)
    b.add_argument("--format", choices=["files", "shards"], default="files")
    b.add_argument("--workers", type=int, default=4)
    b.add_argument("--batch", type=int, default=32)
    b.add_argument("--image-size", type=int, default=224)
    b.add_argument("--no-decode", action="store_true", help="read the bytes only")
    b.add_argument("--json", action="store_true")
    a = p.parse_args()
    if a.cmd == "generate":
        cmd_generate(a)
    else:
        cmd_bench(a)


if __name__ == "__main__":
    main()
