"""libddlcomm's C API on CUDA tensors (device pointers), one rank, backend nccl: out-of-place allreduce,
allgather, broadcast and a fused allreduce each give exact results and leave their inputs alone. The
pointer paths are what this checks (no host copy of a device pointer); the arithmetic of more than one
rank needs more than one GPU. Run by tests/gpu/run.sh with PYTHONPATH holding dist/python."""
import ctypes
import os
import sys

import torch

os.environ["DDL_BACKEND"] = "nccl"
import ddl_torch  # noqa: E402  (the library loader: DDL_LIBDDLCOMM or dist/lib)

lib = ddl_torch._load()
lib.ddlcomm_allgather.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
lib.ddlcomm_broadcast.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
lib.ddlcomm_fusion_submit.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t,
                                      ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_uint64)]
lib.ddlcomm_fusion_synchronize.argtypes = [ctypes.c_void_p]

comm = ctypes.c_void_p()
if lib.ddlcomm_init(ctypes.byref(comm), 0, 1, b"127.0.0.1", 29531, None, 60.0) != 0:
    sys.exit(f"init: {lib.ddlcomm_last_error().decode()}")
backend = lib.ddlcomm_backend(comm).decode()
failures = []


def check(name, rc, ok):
    good = rc == 0 and ok()
    if rc != 0:
        failures.append(f"{name}: {lib.ddlcomm_last_error().decode()}")
    elif not good:
        failures.append(f"{name}: wrong result")
    print(f"{name}: {'ok' if good else 'FAILED'}")


dev = torch.device("cuda", 0)
n = 1 << 20
a = (torch.arange(n, device=dev) % 7 + 1).float()
keep = a.clone()
b = torch.zeros(n, device=dev)
check("allreduce out of place", lib.ddlcomm_allreduce(comm, a.data_ptr(), b.data_ptr(), n, 0, 0),
      lambda: torch.equal(b, keep) and torch.equal(a, keep))
g = torch.zeros(n, device=dev)
check("allgather out of place", lib.ddlcomm_allgather(comm, a.data_ptr(), g.data_ptr(), n, 0),
      lambda: torch.equal(g, keep))
c = keep.clone()
check("broadcast", lib.ddlcomm_broadcast(comm, c.data_ptr(), n, 0, 0), lambda: torch.equal(c, keep))
# Three float tensors of odd sizes (packed on the GPU at their offsets) and a half one.
cuts = [0, 1, 4099, n // 2, n]
want = [keep[cuts[i]:cuts[i + 1]] for i in range(3)] + [keep[cuts[3]:].half()]
parts = [w.clone() for w in want]
h = ctypes.c_uint64()
rc = 0
for i, p in enumerate(parts):
    rc = rc or lib.ddlcomm_fusion_submit(comm, f"p{i}".encode(), p.data_ptr(), p.numel(),
                                         1 if p.dtype == torch.float16 else 0, 0, ctypes.byref(h))
rc = rc or lib.ddlcomm_fusion_synchronize(comm)
check("fused allreduce", rc, lambda: all(torch.equal(p, w) for p, w in zip(parts, want)))
lib.ddlcomm_destroy(comm)
print(f"backend {backend}: {len(failures)} failure(s)")
for f in failures:
    print("  " + f)
sys.exit(1 if failures or backend != "nccl" else 0)
