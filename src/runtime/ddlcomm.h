/* libddlcomm C API: collectives for data-parallel training (see src/runtime/README.md).
 *
 * Every function returns DDLCOMM_OK (0) or an error code; ddlcomm_last_error() gives the message of
 * the last failure on the calling thread (it names the failed peer's rank and address). After a
 * collective fails, the communicator stays failed: destroy it and exit. Buffers are host memory (the
 * NCCL backend also accepts device memory). One thread at a time per communicator; while fusion
 * submissions are outstanding use only the ddlcomm_fusion_* calls. */
#ifndef DDLCOMM_H
#define DDLCOMM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define DDLCOMM_API __attribute__((visibility("default")))
#else
#define DDLCOMM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ddlcomm ddlcomm_t;
typedef struct ddlcomm_compressor ddlcomm_compressor_t;

typedef enum { DDLCOMM_FLOAT32 = 0, DDLCOMM_FLOAT16 = 1 } ddlcomm_dtype_t;
typedef enum { DDLCOMM_SUM = 0, DDLCOMM_AVERAGE = 1 } ddlcomm_op_t;

enum {
    DDLCOMM_OK = 0,
    DDLCOMM_ERR_INVALID = 1,   /* bad argument or environment */
    DDLCOMM_ERR_BOOTSTRAP = 2, /* rendezvous did not complete in time */
    DDLCOMM_ERR_PEER = 3,      /* a peer died or closed its connection */
    DDLCOMM_ERR_TIMEOUT = 4,   /* no progress within DDL_TIMEOUT_S */
    DDLCOMM_ERR_INTERNAL = 5
};

/* Bootstraps from DDL_* / OMPI_COMM_WORLD_* / SLURM_* / torchrun variables. */
DDLCOMM_API int ddlcomm_init_from_env(ddlcomm_t** comm);
/* Explicit bootstrap; iface may be NULL (default interface), timeout_s <= 0 keeps the default. */
DDLCOMM_API int ddlcomm_init(ddlcomm_t** comm, int rank, int size, const char* master_addr, int master_port,
                             const char* iface, double timeout_s);
DDLCOMM_API void ddlcomm_destroy(ddlcomm_t* comm);

DDLCOMM_API int ddlcomm_rank(const ddlcomm_t* comm);
DDLCOMM_API int ddlcomm_size(const ddlcomm_t* comm);
DDLCOMM_API int ddlcomm_local_rank(const ddlcomm_t* comm);
DDLCOMM_API const char* ddlcomm_backend(const ddlcomm_t* comm); /* "tcp" or "nccl" */
DDLCOMM_API const char* ddlcomm_last_error(void);
/* The rank blamed by the last failure on this thread, -1 if none. */
DDLCOMM_API int ddlcomm_last_error_peer(void);

DDLCOMM_API int ddlcomm_allreduce(ddlcomm_t* comm, const void* send, void* recv, size_t count,
                                  ddlcomm_dtype_t dtype, ddlcomm_op_t op);
DDLCOMM_API int ddlcomm_broadcast(ddlcomm_t* comm, void* buffer, size_t count, ddlcomm_dtype_t dtype,
                                  int root);
DDLCOMM_API int ddlcomm_allgather(ddlcomm_t* comm, const void* send, void* recv, size_t count,
                                  ddlcomm_dtype_t dtype);
DDLCOMM_API int ddlcomm_barrier(ddlcomm_t* comm);

/* Tensor fusion. Knobs apply to the fusion queue created by the next submit (threshold in bytes). */
DDLCOMM_API int ddlcomm_fusion_configure(ddlcomm_t* comm, size_t threshold_bytes, int cycle_time_ms);
DDLCOMM_API int ddlcomm_fusion_submit(ddlcomm_t* comm, const char* name, void* buffer, size_t count,
                                      ddlcomm_dtype_t dtype, ddlcomm_op_t op, uint64_t* handle);
DDLCOMM_API int ddlcomm_fusion_wait(ddlcomm_t* comm, uint64_t handle);
DDLCOMM_API int ddlcomm_fusion_synchronize(ddlcomm_t* comm);

/* Bytes this rank's collectives have sent on the wire since init (the TCP ring counts them at the socket; the
 * NCCL backend computes its ring's volume). A step's figure is the difference of two readings. */
DDLCOMM_API uint64_t ddlcomm_bytes_sent(const ddlcomm_t* comm);

/* Gradient compression with error feedback (README: "Gradient compression"). spec: "none", "fp16",
 * "powersgd[:rank=R][,start=N][,min=E]" or "topk[:ratio=F][,start=N][,min=E]". The compressor uses the
 * communicator (not while fusion submissions are outstanding) and must be destroyed before it. */
DDLCOMM_API int ddlcomm_compressor_create(ddlcomm_t* comm, const char* spec, ddlcomm_compressor_t** out);
DDLCOMM_API void ddlcomm_compressor_destroy(ddlcomm_compressor_t* compressor);
/* Averages `count` float32 host values over the ranks, in place, compressed. `key` names the bucket (its
 * residual and factors are kept across calls); the bucket holds n_tensors tensors back to back, tensor i
 * of rows[i] x cols[i] (a tensor of shape (d0, d1, ...) is d0 x d1*...); n_tensors 0: one vector. */
DDLCOMM_API int ddlcomm_compressor_reduce(ddlcomm_compressor_t* compressor, uint64_t key, float* buffer,
                                          size_t count, size_t n_tensors, const size_t* rows,
                                          const size_t* cols);
/* This rank's residual of bucket `key` into out (count values; zeros before its first compressed step). */
DDLCOMM_API int ddlcomm_compressor_residual(const ddlcomm_compressor_t* compressor, uint64_t key, float* out,
                                            size_t count);
/* The state for a checkpoint: *size is set to its length; out (capacity bytes, may be NULL) receives it when
 * large enough, else DDLCOMM_ERR_INVALID. Load restores it into a compressor of the same kind. */
DDLCOMM_API int ddlcomm_compressor_save(const ddlcomm_compressor_t* compressor, void* out, size_t capacity,
                                        size_t* size);
DDLCOMM_API int ddlcomm_compressor_load(ddlcomm_compressor_t* compressor, const void* data, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* DDLCOMM_H */
