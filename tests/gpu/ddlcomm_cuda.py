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
parts = [keep[: n // 2].clone(), keep[n // 2:].half().clone()]
h = ctypes.c_uint64()
rc = lib.ddlcomm_fusion_submit(comm, b"p0", parts[0].data_ptr(), parts[0].numel(), 0, 0, ctypes.byref(h))
rc = rc or lib.ddlcomm_fusion_submit(comm, b"p1", parts[1].data_ptr(), parts[1].numel(), 1, 0, ctypes.byref(h))
rc = rc or lib.ddlcomm_fusion_synchronize(comm)
check("fused allreduce", rc, lambda: torch.equal(parts[0], keep[: n // 2]) and torch.equal(parts[1], keep[n // 2:].half()))
lib.ddlcomm_destroy(comm)
print(f"backend {backend}: {len(failures)} failure(s)")
for f in failures:
    print("  " + f)
sys.exit(1 if failures or backend != "nccl" else 0)
