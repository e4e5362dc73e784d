#!/usr/bin/env python3
"""Turns bench/side_by_side.sh's raw figures into Markdown tables.

Input lines: "KIND-PEER SIZE_BYTES TIME_US" (KIND bw or lat), and "iperf3 0 GOODPUT_GB_PER_S".
busbw = algbw * 2(N-1)/N with algbw = size / time, GB/s = 1e9 B/s (nccl-tests' definitions).
A figure measured in several rounds (ROUNDS=k) is the median of its runs; so is the iperf3 goodput.
The targets are reported as met or not; nothing here fails on a figure.
"""
import statistics
import sys

PEERS = ["ddl", "ddl-base", "gloo", "mpi", "mpi-ring"]
LABEL = {"ddl": "ddl", "ddl-base": "ddl baseline", "gloo": "Gloo ring-chunked", "mpi": "Open MPI default",
         "mpi-ring": "Open MPI ring"}


def size_text(b):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale and b % scale == 0:
            return f"{b // scale} {unit}"
    return f"{b} B"


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    runs = {"bw": {}, "lat": {}}
    goodputs = []
    for line in open(path):
        parts = line.split()
        if len(parts) != 3:
            continue
        if parts[0] == "iperf3":
            goodputs.append(float(parts[2]))
            continue
        kind, peer = parts[0].split("-", 1)
        runs[kind].setdefault(int(parts[1]), {}).setdefault(peer, []).append(float(parts[2]))
    times = {k: {size: {p: statistics.median(v) for p, v in row.items()} for size, row in by.items()}
             for k, by in runs.items()}
    goodput = statistics.median(goodputs) if goodputs else None
    rounds = {k: max([len(v) for row in by.values() for v in row.values()], default=0) for k, by in runs.items()}
    median = {k: f", median of {r} runs" if r > 1 else "" for k, r in rounds.items()}
    peers = [p for p in PEERS if any(p in row for by in times.values() for row in by.values())]

    factor = 2 * (n - 1) / n
    busbw = lambda size, us: size / (us * 1e-6) * factor / 1e9

    print(f"### Allreduce bus bandwidth, float32 sum, {n} ranks (GB/s = 1e9 B/s{median['bw']})\n")
    if goodput is not None:
        print(f"iperf3 goodput between two nodes: **{goodput:.4f} GB/s** ({goodput * 8:.3f} Gbit/s)\n")
    base = "ddl-base" in peers
    head = ["size"] + [LABEL[p] for p in peers] + ["ddl/iperf3", "ddl/Gloo", "ddl/best MPI"]
    head += ["ddl/baseline"] if base else []
    head += ["targets"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for size in sorted(times["bw"]):
        row = times["bw"][size]
        bw = {p: busbw(size, row[p]) for p in peers if p in row and row[p] > 0}
        cells = [size_text(size)] + [f"{bw[p]:.4f}" if p in bw else "—" for p in peers]
        notes = []
        ddl = bw.get("ddl")
        mpi_best = max([bw[p] for p in ("mpi", "mpi-ring") if p in bw], default=None)
        r_iperf = ddl / goodput if ddl and goodput else None
        r_gloo = ddl / bw["gloo"] if ddl and "gloo" in bw else None
        r_mpi = ddl / mpi_best if ddl and mpi_best else None
        cells += [f"{r:.3f}" if r is not None else "—" for r in (r_iperf, r_gloo, r_mpi)]
        if base:
            cells.append(f"{ddl / bw['ddl-base']:.3f}" if ddl and "ddl-base" in bw else "—")
        if r_iperf is not None and size >= 16 << 20:
            notes.append("≥0.95·iperf3 " + ("met" if r_iperf >= 0.95 else "MISSED"))
        if r_gloo is not None:
            notes.append("≥Gloo " + ("met" if r_gloo >= 1.0 else "MISSED"))
        if r_mpi is not None:
            notes.append("≥1.15·MPI " + ("met" if r_mpi >= 1.15 else "MISSED"))
        cells.append(", ".join(notes))
        print("| " + " | ".join(cells) + " |")

    if times["lat"]:
        print(f"\n### Small-message allreduce latency, float32 sum, {n} ranks (µs, mean of one call, slowest rank{median['lat']})\n")
        head = ["size"] + [LABEL[p] for p in peers] + ["Gloo/ddl", "best MPI/ddl"]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for size in sorted(times["lat"]):
            row = times["lat"][size]
            cells = [size_text(size)] + [f"{row[p]:.1f}" if p in row else "—" for p in peers]
            ddl = row.get("ddl")
            mpi_best = min([row[p] for p in ("mpi", "mpi-ring") if p in row], default=None)
            cells.append(f"{row['gloo'] / ddl:.2f}" if ddl and "gloo" in row else "—")
            cells.append(f"{mpi_best / ddl:.2f}" if ddl and mpi_best else "—")
            print("| " + " | ".join(cells) + " |")
        print("\n(ratios > 1: ddl is faster)")


if __name__ == "__main__":
    main()
