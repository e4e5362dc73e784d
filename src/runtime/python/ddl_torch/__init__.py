"""PyTorch DistributedDataParallel over libddlcomm: a DDP communication hook.

Two lines in an existing DDP script (after ``DistributedDataParallel(...)``)::

    import ddl_torch
    ddl_torch.register(ddp)                      # or ddl_torch.register(ddp, compression="fp16")

DDP keeps its own process group (Gloo or NCCL, ``init_process_group("env://")`` as before) for the
broadcast of the initial parameters and its bookkeeping; the gradient buckets are averaged by libddlcomm
instead (its TCP ring on CPUs, its NCCL backend on GPUs). ``ddl run`` puts this package on PYTHONPATH
(/opt/ddl/python) and sets the variables both read. libddlcomm's rendezvous listens on rank 0 at
MASTER_PORT + 1 (torch's store has MASTER_PORT); DDL_HOOK_PORT names another.

Buckets are reduced in the order DDP hands them over, on one background thread per process, so the
allreduce of one bucket overlaps the backward pass of the next; ctypes releases the GIL during each call.
"""
import ctypes
import os
import queue
import threading

import torch
import torch.distributed as dist

__all__ = ["DdlState", "allreduce_hook", "fp16_compress_hook", "register"]

_FLOAT32, _FLOAT16 = 0, 1
_SUM, _AVERAGE = 0, 1


def _library_path():
    explicit = os.environ.get("DDL_LIBDDLCOMM")
    if explicit:
        return explicit
    # /opt/ddl/python/ddl_torch/__init__.py -> /opt/ddl/lib/libddlcomm.so.0
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "lib", "libddlcomm.so.0")


def _load():
    path = _library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise RuntimeError(f"ddl_torch: cannot load libddlcomm ({path}): {e}; set DDL_LIBDDLCOMM to its path") from e
    lib.ddlcomm_init.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                 ctypes.c_int, ctypes.c_char_p, ctypes.c_double]
    lib.ddlcomm_init.restype = ctypes.c_int
    lib.ddlcomm_allreduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                      ctypes.c_int, ctypes.c_int]
    lib.ddlcomm_allreduce.restype = ctypes.c_int
    lib.ddlcomm_destroy.argtypes = [ctypes.c_void_p]
    lib.ddlcomm_destroy.restype = None
    lib.ddlcomm_backend.argtypes = [ctypes.c_void_p]
    lib.ddlcomm_backend.restype = ctypes.c_char_p
    lib.ddlcomm_last_error.argtypes = []
    lib.ddlcomm_last_error.restype = ctypes.c_char_p
    return lib


class DdlState:
    """One libddlcomm communicator over the ranks of torch's default process group, and the thread that
    drives it. Made by register(); pass it to register_comm_hook yourself to combine with other state."""

    def __init__(self, timeout_s=0.0):
        if not dist.is_initialized():
            raise RuntimeError("ddl_torch: call torch.distributed.init_process_group first")
        self.rank, self.size = dist.get_rank(), dist.get_world_size()
        self._lib = _load()
        addr = os.environ.get("DDL_MASTER_ADDR") or os.environ.get("MASTER_ADDR") or "127.0.0.1"
        port = int(os.environ.get("DDL_HOOK_PORT") or int(os.environ.get("MASTER_PORT", "29500")) + 1)
        iface = os.environ.get("DDL_IFACE") or None
        comm = ctypes.c_void_p()
        rc = self._lib.ddlcomm_init(ctypes.byref(comm), self.rank, self.size, addr.encode(), port,
                                    iface.encode() if iface else None, float(timeout_s))
        if rc != 0:
            raise RuntimeError(f"ddl_torch: libddlcomm bootstrap at {addr}:{port} failed: "
                               f"{self._lib.ddlcomm_last_error().decode(errors='replace')}")
        self._comm = comm
        self.backend = self._lib.ddlcomm_backend(comm).decode()
        self._work = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="ddl_torch", daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            item = self._work.get()
            if item is None:
                return
            tensor, dtype, op, done = item
            rc = self._lib.ddlcomm_allreduce(self._comm, tensor.data_ptr(), tensor.data_ptr(), tensor.numel(),
                                             dtype, op)
            if rc != 0:
                message = self._lib.ddlcomm_last_error().decode(errors="replace")
                done(None, RuntimeError(f"ddl_torch: allreduce failed: {message}"))
            else:
                done(tensor, None)

    def allreduce_async(self, tensor, average=True):
        """Reduces a contiguous float32/float16 tensor in place on the background thread; returns a
        torch.futures.Future completed with the tensor."""
        if tensor.dtype == torch.float32:
            dtype = _FLOAT32
        elif tensor.dtype == torch.float16:
            dtype = _FLOAT16
        else:
            raise TypeError(f"ddl_torch: libddlcomm reduces float32 and float16, not {tensor.dtype}")
        # The TCP ring works on host memory; the NCCL backend takes device memory as it is.
        staged = tensor.is_cuda and self.backend != "nccl"
        work = tensor.detach().cpu().contiguous() if staged else tensor.contiguous()
        fut = torch.futures.Future()

        def done(result, error):
            if error is not None:
                fut.set_exception(error)
            elif staged:
                tensor.copy_(result)
                fut.set_result(tensor)
            else:
                if result.data_ptr() != tensor.data_ptr():
                    tensor.copy_(result)
                fut.set_result(tensor)

        self._work.put((work, dtype, _AVERAGE if average else _SUM, done))
        return fut

    def close(self):
        if self._comm is not None:
            self._work.put(None)
            self._thread.join()
            self._lib.ddlcomm_destroy(self._comm)
            self._comm = None


def allreduce_hook(state, bucket):
    """Averages the bucket's gradients with libddlcomm (DDP's default semantics)."""
    return state.allreduce_async(bucket.buffer(), average=True)


def fp16_compress_hook(state, bucket):
    """Sends the gradients as float16 (half the bytes), divided by the world size first as PyTorch's own
    fp16 hook does, and returns them in the bucket's type."""
    buffer = bucket.buffer()
    compressed = buffer.div(state.size).to(torch.float16)
    fut = state.allreduce_async(compressed, average=False)

    def decompress(f):
        buffer.copy_(f.value())
        return buffer

    return fut.then(decompress)


def register(ddp_model, compression=None, timeout_s=0.0):
    """Makes DDP reduce its gradient buckets with libddlcomm; compression None or "fp16". Returns the state
    (its .backend says "tcp" or "nccl")."""
    hooks = {None: allreduce_hook, "none": allreduce_hook, "fp16": fp16_compress_hook}
    if compression not in hooks:
        raise ValueError(f"ddl_torch: compression must be None or 'fp16', not {compression!r}")
    state = DdlState(timeout_s)
    ddp_model.register_comm_hook(state, hooks[compression])
    return state
