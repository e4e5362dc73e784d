// The C API over Communicator and FusionQueue: exceptions become codes plus a thread-local message.
#include "runtime/ddlcomm.h"

#include "runtime/Communicator.hpp"
#include "runtime/Compressor.hpp"
#include "runtime/FusionQueue.hpp"

#include <cstring>
#include <memory>
#include <string>

struct ddlcomm {
    std::unique_ptr<ddl::runtime::Communicator> comm;
    ddl::runtime::FusionOptions fusion_options;
    std::unique_ptr<ddl::runtime::FusionQueue> fusion;
};

namespace {

thread_local std::string t_last_error;
thread_local int t_last_peer = -1;

int code_of(ddl::runtime::CommErrorKind kind) {
    using ddl::runtime::CommErrorKind;
    switch (kind) {
    case CommErrorKind::invalid_argument:
        return DDLCOMM_ERR_INVALID;
    case CommErrorKind::bootstrap:
        return DDLCOMM_ERR_BOOTSTRAP;
    case CommErrorKind::peer_failed:
        return DDLCOMM_ERR_PEER;
    case CommErrorKind::timeout:
        return DDLCOMM_ERR_TIMEOUT;
    default:
        return DDLCOMM_ERR_INTERNAL;
    }
}

template <typename F> int call(F&& body) {
    try {
        body();
        return DDLCOMM_OK;
    } catch (const ddl::runtime::CommError& e) {
        t_last_error = e.what();
        t_last_peer = e.peer_rank();
        return code_of(e.kind());
    } catch (const std::exception& e) {
        t_last_error = e.what();
        t_last_peer = -1;
        return DDLCOMM_ERR_INTERNAL;
    }
}

int invalid(const char* message) {
    t_last_error = message;
    t_last_peer = -1;
    return DDLCOMM_ERR_INVALID;
}

ddl::runtime::DataType to_type(ddlcomm_dtype_t t) {
    return t == DDLCOMM_FLOAT16 ? ddl::runtime::DataType::float16 : ddl::runtime::DataType::float32;
}
ddl::runtime::ReduceOp to_op(ddlcomm_op_t op) {
    return op == DDLCOMM_AVERAGE ? ddl::runtime::ReduceOp::average : ddl::runtime::ReduceOp::sum;
}
bool valid_type(ddlcomm_dtype_t t) {
    return t == DDLCOMM_FLOAT32 || t == DDLCOMM_FLOAT16;
}

ddl::runtime::Communicator& direct(ddlcomm* c) {
    // The queue owns the communicator while it lives; direct calls drain and retire it first.
    c->fusion.reset();
    return *c->comm;
}

} // namespace

struct ddlcomm_compressor {
    ddlcomm* owner;
    std::unique_ptr<ddl::runtime::Compressor> compressor;
};

extern "C" {

int ddlcomm_init_from_env(ddlcomm_t** out) {
    if (out == nullptr) return invalid("ddlcomm_init_from_env: null output pointer");
    *out = nullptr;
    return call([&] {
        auto c = std::make_unique<ddlcomm>();
        c->comm = ddl::runtime::Communicator::from_env();
        c->fusion_options = {c->comm->options().fusion_threshold, c->comm->options().cycle_time};
        *out = c.release();
    });
}

int ddlcomm_init(ddlcomm_t** out, int rank, int size, const char* master_addr, int master_port,
                 const char* iface, double timeout_s) {
    if (out == nullptr || master_addr == nullptr) return invalid("ddlcomm_init: null argument");
    *out = nullptr;
    return call([&] {
        ddl::runtime::CommOptions opts;
        opts.rank = rank;
        opts.size = size;
        opts.master_addr = master_addr;
        opts.master_port = master_port;
        if (iface != nullptr) opts.iface = iface;
        if (timeout_s > 0) opts.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
        auto c = std::make_unique<ddlcomm>();
        c->comm = std::make_unique<ddl::runtime::Communicator>(opts);
        c->fusion_options = {opts.fusion_threshold, opts.cycle_time};
        *out = c.release();
    });
}

void ddlcomm_destroy(ddlcomm_t* comm) {
    if (comm == nullptr) return;
    try {
        comm->fusion.reset();
    } catch (...) {
        // Destruction must not throw; a failed queue has already reported its error.
    }
    delete comm;
}

int ddlcomm_rank(const ddlcomm_t* comm) {
    return comm ? comm->comm->rank() : -1;
}
int ddlcomm_size(const ddlcomm_t* comm) {
    return comm ? comm->comm->size() : -1;
}
int ddlcomm_local_rank(const ddlcomm_t* comm) {
    return comm ? comm->comm->local_rank() : -1;
}
const char* ddlcomm_backend(const ddlcomm_t* comm) {
    return comm ? comm->comm->backend_name() : "";
}
const char* ddlcomm_last_error(void) {
    return t_last_error.c_str();
}
int ddlcomm_last_error_peer(void) {
    return t_last_peer;
}

int ddlcomm_allreduce(ddlcomm_t* comm, const void* send, void* recv, size_t count, ddlcomm_dtype_t dtype,
                      ddlcomm_op_t op) {
    if (comm == nullptr || !valid_type(dtype))
        return invalid("ddlcomm_allreduce: null communicator or bad dtype");
    return call([&] { direct(comm).allreduce(send, recv, count, to_type(dtype), to_op(op)); });
}

int ddlcomm_broadcast(ddlcomm_t* comm, void* buffer, size_t count, ddlcomm_dtype_t dtype, int root) {
    if (comm == nullptr || !valid_type(dtype))
        return invalid("ddlcomm_broadcast: null communicator or bad dtype");
    return call([&] { direct(comm).broadcast(buffer, count, to_type(dtype), root); });
}

int ddlcomm_allgather(ddlcomm_t* comm, const void* send, void* recv, size_t count, ddlcomm_dtype_t dtype) {
    if (comm == nullptr || !valid_type(dtype))
        return invalid("ddlcomm_allgather: null communicator or bad dtype");
    return call([&] { direct(comm).allgather(send, recv, count, to_type(dtype)); });
}

int ddlcomm_barrier(ddlcomm_t* comm) {
    if (comm == nullptr) return invalid("ddlcomm_barrier: null communicator");
    return call([&] { direct(comm).barrier(); });
}

int ddlcomm_fusion_configure(ddlcomm_t* comm, size_t threshold_bytes, int cycle_time_ms) {
    if (comm == nullptr || cycle_time_ms < 0) return invalid("ddlcomm_fusion_configure: bad argument");
    comm->fusion_options = {threshold_bytes, std::chrono::milliseconds(cycle_time_ms)};
    return DDLCOMM_OK;
}

int ddlcomm_fusion_submit(ddlcomm_t* comm, const char* name, void* buffer, size_t count,
                          ddlcomm_dtype_t dtype, ddlcomm_op_t op, uint64_t* handle) {
    if (comm == nullptr || !valid_type(dtype))
        return invalid("ddlcomm_fusion_submit: null communicator or bad dtype");
    return call([&] {
        if (!comm->fusion)
            comm->fusion = std::make_unique<ddl::runtime::FusionQueue>(*comm->comm, comm->fusion_options);
        const auto h = comm->fusion->submit(name ? name : "", buffer, count, to_type(dtype), to_op(op));
        if (handle != nullptr) *handle = h;
    });
}

int ddlcomm_fusion_wait(ddlcomm_t* comm, uint64_t handle) {
    if (comm == nullptr) return invalid("ddlcomm_fusion_wait: null communicator");
    return call([&] {
        if (comm->fusion) comm->fusion->wait(handle);
    });
}

int ddlcomm_fusion_synchronize(ddlcomm_t* comm) {
    if (comm == nullptr) return invalid("ddlcomm_fusion_synchronize: null communicator");
    return call([&] {
        if (comm->fusion) comm->fusion->synchronize();
    });
}

uint64_t ddlcomm_bytes_sent(const ddlcomm_t* comm) {
    return comm ? comm->comm->bytes_sent() : 0;
}

int ddlcomm_compressor_create(ddlcomm_t* comm, const char* spec, ddlcomm_compressor_t** out) {
    if (comm == nullptr || spec == nullptr || out == nullptr)
        return invalid("ddlcomm_compressor_create: null argument");
    *out = nullptr;
    auto parsed = ddl::runtime::parse_compression(spec);
    if (!parsed) return invalid(parsed.error().message.c_str());
    return call([&] {
        auto c = std::make_unique<ddlcomm_compressor>();
        c->owner = comm;
        c->compressor = std::make_unique<ddl::runtime::Compressor>(*comm->comm, *parsed);
        *out = c.release();
    });
}

void ddlcomm_compressor_destroy(ddlcomm_compressor_t* compressor) {
    delete compressor;
}

int ddlcomm_compressor_reduce(ddlcomm_compressor_t* compressor, uint64_t key, float* buffer, size_t count,
                              size_t n_tensors, const size_t* rows, const size_t* cols) {
    if (compressor == nullptr || (n_tensors > 0 && (rows == nullptr || cols == nullptr)))
        return invalid("ddlcomm_compressor_reduce: null argument");
    return call([&] {
        direct(compressor->owner); // a fusion queue drains first
        std::vector<ddl::runtime::MatrixShape> shapes(n_tensors);
        for (size_t i = 0; i < n_tensors; ++i)
            shapes[i] = {rows[i], cols[i]};
        compressor->compressor->reduce(key, buffer, count, shapes);
    });
}

int ddlcomm_compressor_residual(const ddlcomm_compressor_t* compressor, uint64_t key, float* out,
                                size_t count) {
    if (compressor == nullptr || (count > 0 && out == nullptr))
        return invalid("ddlcomm_compressor_residual: null argument");
    const auto r = compressor->compressor->residual(key);
    if (!r.empty() && r.size() != count)
        return invalid("ddlcomm_compressor_residual: count is not the bucket's");
    for (size_t i = 0; i < count; ++i)
        out[i] = r.empty() ? 0.0f : r[i];
    return DDLCOMM_OK;
}

int ddlcomm_compressor_save(const ddlcomm_compressor_t* compressor, void* out, size_t capacity,
                            size_t* size) {
    if (compressor == nullptr || size == nullptr) return invalid("ddlcomm_compressor_save: null argument");
    return call([&] {
        const auto bytes = compressor->compressor->save();
        *size = bytes.size();
        if (out == nullptr) return;
        if (capacity < bytes.size())
            throw ddl::runtime::CommError(ddl::runtime::CommErrorKind::invalid_argument,
                                          "ddlcomm_compressor_save: the buffer holds " +
                                              std::to_string(capacity) + " bytes, the state needs " +
                                              std::to_string(bytes.size()));
        std::memcpy(out, bytes.data(), bytes.size());
    });
}

int ddlcomm_compressor_load(ddlcomm_compressor_t* compressor, const void* data, size_t size) {
    if (compressor == nullptr || (size > 0 && data == nullptr))
        return invalid("ddlcomm_compressor_load: null argument");
    return call([&] { compressor->compressor->load({static_cast<const std::byte*>(data), size}); });
}

} // extern "C"
