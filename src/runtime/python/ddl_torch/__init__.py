"""PyTorch DistributedDataParallel over libddlcomm: a DDP communication hook.

Two lines in an existing DDP script (after ``DistributedDataParallel(...)``)::

    import ddl_torch
    ddl_torch.register(ddp)              # or compression="fp16" | "powersgd:rank=4" | "topk:ratio=0.01"

DDP keeps its own process group (Gloo or NCCL, ``init_process_group("env://")`` as before) for the
broadcast of the initial parameters and its bookkeeping; the gradient buckets are averaged by libddlcomm
instead (its TCP ring on CPUs, its NCCL backend on GPUs). ``ddl run`` puts this package on PYTHONPATH
(/opt/ddl/python) and sets the variables both read. libddlcomm's rendezvous listens on rank 0 at
MASTER_PORT + 1 (torch's store has MASTER_PORT); DDL_HOOK_PORT names another.

Buckets are reduced in the order DDP hands them over, on one background thread per process, so the
allreduce of one bucket overlaps the backward pass of the next; ctypes releases the GIL during each call.

Compression "powersgd:..." and "topk:..." run libddlcomm's compressor (C++, ddlcomm_compressor_*): the
factors, the top-k selection, the error-feedback memory and the collectives are all in the library, on host
float32 (CUDA buckets are staged through host memory). The hook passes each bucket's tensor shapes, so
PowerSGD factors every parameter as a shape[0] x rest matrix. The compressor's memory (residuals, Q, step
counts) differs on every rank: save ``state.state_dict()`` per rank beside the model and restore it with
``state.load_state_dict(...)``. ``state.bytes_sent()`` counts what this rank has put on the wire.
"""
import ctypes
import os
import queue
import threading

import torch
import torch.distributed as dist

__all__ = ["DdlState", "allreduce_hook", "compressed_hook", "fp16_compress_hook", "register"]

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
    lib.ddlcomm_bytes_sent.argtypes = [ctypes.c_void_p]
    lib.ddlcomm_bytes_sent.restype = ctypes.c_uint64
    lib.ddlcomm_compressor_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.ddlcomm_compressor_create.restype = ctypes.c_int
    lib.ddlcomm_compressor_destroy.argtypes = [ctypes.c_void_p]
    lib.ddlcomm_compressor_destroy.restype = None
    lib.ddlcomm_compressor_reduce.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t,
                                              ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t),
                                              ctypes.POINTER(ctypes.c_size_t)]
    lib.ddlcomm_compressor_reduce.restype = ctypes.c_int
    lib.ddlcomm_compressor_save.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                            ctypes.POINTER(ctypes.c_size_t)]
    lib.ddlcomm_compressor_save.restype = ctypes.c_int
    lib.ddlcomm_compressor_load.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    lib.ddlcomm_compressor_load.restype = ctypes.c_int
    return lib


class DdlState:
    """One libddlcomm communicator over the ranks of torch's default process group, and the thread that
    drives it. Made by register(); pass it to register_comm_hook yourself to combine with other state."""

    def __init__(self, timeout_s=0.0, compression=None):
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
        self.compression = compression
        self._compressor = None
        if compression not in (None, "none", "fp16"):
            compressor = ctypes.c_void_p()
            if self._lib.ddlcomm_compressor_create(comm, compression.encode(), ctypes.byref(compressor)) != 0:
                message = self._lib.ddlcomm_last_error().decode(errors="replace")
                self._lib.ddlcomm_destroy(comm)
                raise ValueError(f"ddl_torch: {message}")
            self._compressor = compressor
        self._work = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="ddl_torch", daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            item = self._work.get()
            if item is None:
                return
            call, tensor, done = item
            if call() != 0:
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
        op = _AVERAGE if average else _SUM

        def call():
            return self._lib.ddlcomm_allreduce(self._comm, work.data_ptr(), work.data_ptr(), work.numel(), dtype, op)

        return self._submit(call, tensor, work, staged)

    def compressed_allreduce_async(self, key, tensor, shapes):
        """Averages a float32 tensor in place with the compressor, `shapes` the (rows, cols) of the tensors
        laid back to back in it; returns a torch.futures.Future completed with the tensor."""
        if tensor.dtype != torch.float32:
            raise TypeError(f"ddl_torch: the compressor works on float32 gradients, not {tensor.dtype}")
        staged = tensor.is_cuda
        work = tensor.detach().cpu().contiguous() if staged else tensor.contiguous()
        n = len(shapes)
        rows = (ctypes.c_size_t * n)(*[r for r, _ in shapes])
        cols = (ctypes.c_size_t * n)(*[c for _, c in shapes])

        def call():
            return self._lib.ddlcomm_compressor_reduce(self._compressor, key, work.data_ptr(), work.numel(), n,
                                                       rows, cols)

        return self._submit(call, tensor, work, staged)

    def _submit(self, call, tensor, work, staged):
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

        self._work.put((call, work, done))
        return fut

    def bytes_sent(self):
        """Bytes this rank's collectives have sent on the wire since the hook started."""
        return int(self._lib.ddlcomm_bytes_sent(self._comm))

    def state_dict(self):
        """The compressor's memory on this rank (residuals, Q, step counts) for a checkpoint; call it between
        steps. {} without a compressor."""
        if self._compressor is None:
            return {}
        size = ctypes.c_size_t()
        self._check(self._lib.ddlcomm_compressor_save(self._compressor, None, 0, ctypes.byref(size)), "save")
        out = torch.empty(size.value, dtype=torch.uint8)
        self._check(self._lib.ddlcomm_compressor_save(self._compressor, out.data_ptr(), size.value,
                                                      ctypes.byref(size)), "save")
        return {"compression": self.compression, "compressor": out}

    def load_state_dict(self, state):
        """Restores what state_dict() returned on this rank."""
        if self._compressor is None or not state:
            return
        if state.get("compression") != self.compression:
            raise ValueError(f"ddl_torch: the saved state is of compression {state.get('compression')!r}, "
                             f"this hook runs {self.compression!r}")
        data = state["compressor"].contiguous()
        self._check(self._lib.ddlcomm_compressor_load(self._compressor, data.data_ptr(), data.numel()), "load")

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"ddl_torch: compressor {what}: {self._lib.ddlcomm_last_error().decode(errors='replace')}")

    def close(self):
        if self._comm is not None:
            self._work.put(None)
            self._thread.join()
            if self._compressor is not None:
                self._lib.ddlcomm_compressor_destroy(self._compressor)
                self._compressor = None
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


def compressed_hook(state, bucket):
    """Averages the bucket with libddlcomm's compressor (PowerSGD or top-k with error feedback), keyed by the
    bucket's index; each gradient is passed as a shape[0] x rest matrix (vectors as n x 1)."""
    shapes = []
    for g in bucket.gradients():
        rows = g.shape[0] if g.dim() > 1 else g.numel()
        shapes.append((rows, g.numel() // rows if rows else 0))
    return state.compressed_allreduce_async(bucket.index(), bucket.buffer(), shapes)


def register(ddp_model, compression=None, timeout_s=0.0):
    """Makes DDP reduce its gradient buckets with libddlcomm. compression: None, "fp16",
    "powersgd[:rank=R][,start=N][,min=E]" or "topk[:ratio=F][,start=N][,min=E]". Returns the state (its
    .backend says "tcp" or "nccl"; state_dict()/load_state_dict() carry the compressor's memory)."""
    if compression in (None, "none"):
        hook = allreduce_hook
    elif compression == "fp16":
        hook = fp16_compress_hook
    elif isinstance(compression, str) and compression.split(":")[0] in ("powersgd", "topk"):
        hook = compressed_hook
    else:
        raise ValueError(f"ddl_torch: compression must be None, 'fp16', 'powersgd[:rank=R,...]' or "
                         f"'topk[:ratio=F,...]', not {compression!r}")
    state = DdlState(timeout_s, compression)
    ddp_model.register_comm_hook(state, hook)
    return state
