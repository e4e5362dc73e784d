#include "runtime/NcclBackend.hpp"

#include "runtime/CommError.hpp"
#include "runtime/CudaLibraries.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

namespace ddl::runtime {

namespace {

void check_cuda(const CudaLibraries& cu, cudaError_t rc, const char* what) {
    if (rc != cudaSuccess)
        throw CommError(CommErrorKind::internal, std::string(what) + ": " + cu.get_error_string(rc));
}

// Device scratch memory, freed with the backend.
class DeviceBuffer {
public:
    explicit DeviceBuffer(const CudaLibraries& cu) : m_cu(cu) {}
    ~DeviceBuffer() {
        if (m_ptr != nullptr) m_cu.device_free(m_ptr);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* reserve(std::size_t bytes) {
        if (bytes > m_size) {
            if (m_ptr != nullptr) m_cu.device_free(m_ptr);
            m_ptr = nullptr;
            m_size = 0;
            check_cuda(m_cu, m_cu.device_malloc(&m_ptr, bytes), "cudaMalloc");
            m_size = bytes;
        }
        return m_ptr;
    }

private:
    const CudaLibraries& m_cu;
    void* m_ptr = nullptr;
    std::size_t m_size = 0;
};

class NcclBackend : public Backend {
public:
    NcclBackend(Rendezvous& rv, const CommOptions& opts, const CudaLibraries& cu)
        : m_rv(rv), m_opts(opts), m_cu(cu), m_scratch(cu) {
        int devices = 0;
        if (const cudaError_t rc = m_cu.get_device_count(&devices); rc != cudaSuccess)
            throw CommError(
                CommErrorKind::invalid_argument,
                cuda_device_count_message(m_cu.get_error_string(rc),
                                          rc == cudaErrorInsufficientDriver || rc == cudaErrorNoDevice));
        if (const std::string m = gpu_per_rank_message(rv.rank(), opts.local_rank, devices); !m.empty())
            throw CommError(CommErrorKind::invalid_argument, m);
        check_cuda(m_cu, m_cu.set_device(opts.local_rank), "cudaSetDevice");
        check_cuda(m_cu, m_cu.stream_create_with_flags(&m_stream, cudaStreamNonBlocking), "cudaStreamCreate");
        ncclUniqueId id{};
        std::string blob;
        if (rv.rank() == 0) {
            if (m_cu.get_unique_id(&id) != ncclSuccess)
                throw CommError(CommErrorKind::bootstrap, "ncclGetUniqueId failed");
            blob.assign(reinterpret_cast<const char*>(&id), sizeof id);
        }
        rv.broadcast_from_root(blob);
        if (blob.size() != sizeof id)
            throw CommError(CommErrorKind::bootstrap, "malformed ncclUniqueId from rank 0");
        std::memcpy(&id, blob.data(), sizeof id);
        // Non-blocking init so that a missing peer is noticed by our own deadline, not NCCL's.
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        ncclResult_t rc = m_cu.comm_init_rank_config(&m_comm, rv.size(), id, rv.rank(), &config);
        if (rc != ncclSuccess && rc != ncclInProgress)
            throw CommError(CommErrorKind::bootstrap,
                            std::string("ncclCommInitRank: ") + m_cu.nccl_error_string(rc));
        const auto deadline = Clock::now() + opts.bootstrap_timeout;
        for (;;) {
            ncclResult_t state = ncclSuccess;
            m_cu.comm_get_async_error(m_comm, &state);
            if (state == ncclSuccess) break;
            if (state != ncclInProgress || Clock::now() > deadline) {
                m_cu.comm_abort(m_comm);
                m_comm = nullptr;
                throw CommError(CommErrorKind::bootstrap,
                                std::string("NCCL initialisation failed: ") +
                                    (state == ncclInProgress ? "timed out" : m_cu.nccl_error_string(state)));
            }
            m_rv.check_control();
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }

    ~NcclBackend() override {
        if (m_comm != nullptr) {
            if (m_failed)
                m_cu.comm_abort(m_comm);
            else
                m_cu.comm_destroy(m_comm);
        }
        if (m_stream != nullptr) m_cu.stream_destroy(m_stream);
    }
    NcclBackend(const NcclBackend&) = delete;
    NcclBackend& operator=(const NcclBackend&) = delete;

    const char* name() const override { return "nccl"; }

    void allreduce(void* buffer, std::size_t count, DataType type, ReduceOp op) override {
        const std::size_t bytes = count * element_size(type);
        count_ring_allreduce(bytes);
        void* dev = to_device(buffer, bytes);
        launch(m_cu.all_reduce(dev, dev, count, nccl_type(type), nccl_op(op), m_comm, m_stream));
        from_device(buffer, dev, bytes);
    }

    // Tensors that all live on the GPU are packed there (device-to-device copies on the collectives'
    // stream), reduced once and unpacked, with one wait; any host tensor takes the host pack.
    void allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op) override {
        const bool on_device = std::all_of(tensors.begin(), tensors.end(), [&](const TensorSpan& t) {
            return t.count == 0 || is_device_pointer(t.data);
        });
        if (!on_device) {
            Backend::allreduce_fused(tensors, type, op);
            return;
        }
        const std::size_t esize = element_size(type);
        std::size_t total = 0;
        for (const TensorSpan& t : tensors)
            total += t.count;
        auto* pack = static_cast<char*>(m_scratch.reserve(total * esize));
        auto each = [&](bool into_pack) {
            std::size_t offset = 0;
            for (const TensorSpan& t : tensors) {
                const std::size_t bytes = t.count * esize;
                if (bytes > 0)
                    check_cuda(m_cu,
                               into_pack ? m_cu.memcpy_async(pack + offset, t.data, bytes,
                                                             cudaMemcpyDeviceToDevice, m_stream)
                                         : m_cu.memcpy_async(t.data, pack + offset, bytes,
                                                             cudaMemcpyDeviceToDevice, m_stream),
                               "cudaMemcpyAsync");
                offset += bytes;
            }
        };
        each(true);
        count_ring_allreduce(total * esize);
        launch(m_cu.all_reduce(pack, pack, total, nccl_type(type), nccl_op(op), m_comm, m_stream));
        each(false);
        wait();
    }

    void broadcast(void* buffer, std::size_t bytes, int root) override {
        // A chain from the root: every rank but the last forwards the buffer once.
        if (m_rv.size() > 1 && m_rv.rank() != (root + m_rv.size() - 1) % m_rv.size()) m_bytes_sent += bytes;
        void* dev = to_device(buffer, bytes);
        launch(m_cu.broadcast(dev, dev, bytes, ncclChar, root, m_comm, m_stream));
        from_device(buffer, dev, bytes);
    }

    void allgather(void* recv, std::size_t bytes) override {
        const std::size_t total = bytes * static_cast<std::size_t>(m_rv.size());
        m_bytes_sent += total - bytes; // the ring forwards every block but its own successor's
        void* dev = to_device(recv, total);
        auto* mine = static_cast<char*>(dev) + bytes * static_cast<std::size_t>(m_rv.rank());
        launch(m_cu.all_gather(mine, dev, bytes, ncclChar, m_comm, m_stream));
        from_device(recv, dev, total);
    }

    // Either side may be device memory (unified addressing tells which): cudaMemcpyDefault on the
    // collectives' stream, finished before the call returns.
    void copy(void* dst, const void* src, std::size_t bytes) override {
        if (!is_device_pointer(dst) && !is_device_pointer(src)) {
            Backend::copy(dst, src, bytes);
            return;
        }
        check_cuda(m_cu, m_cu.memcpy_async(dst, src, bytes, cudaMemcpyDefault, m_stream), "cudaMemcpyAsync");
        wait();
    }

private:
    // The ring allreduce's volume: each rank sends 2(N-1)/N of the buffer.
    void count_ring_allreduce(std::size_t bytes) {
        const auto n = static_cast<std::uint64_t>(m_rv.size());
        m_bytes_sent += 2 * (n - 1) * static_cast<std::uint64_t>(bytes) / n;
    }
    static ncclDataType_t nccl_type(DataType type) {
        return type == DataType::float32 ? ncclFloat32 : ncclFloat16;
    }
    static ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::sum ? ncclSum : ncclAvg; }

    bool is_device_pointer(const void* p) const {
        cudaPointerAttributes attrs{};
        if (m_cu.pointer_get_attributes(&attrs, p) != cudaSuccess) {
            m_cu.get_last_error(); // clear the sticky error of an unregistered host pointer
            return false;
        }
        return attrs.type == cudaMemoryTypeDevice || attrs.type == cudaMemoryTypeManaged;
    }

    void* to_device(void* buffer, std::size_t bytes) {
        m_staged = !is_device_pointer(buffer);
        if (!m_staged) return buffer;
        void* dev = m_scratch.reserve(bytes);
        check_cuda(m_cu, m_cu.memcpy_async(dev, buffer, bytes, cudaMemcpyHostToDevice, m_stream),
                   "cudaMemcpyAsync");
        return dev;
    }

    void from_device(void* buffer, void* dev, std::size_t bytes) {
        if (m_staged)
            check_cuda(m_cu, m_cu.memcpy_async(buffer, dev, bytes, cudaMemcpyDeviceToHost, m_stream),
                       "cudaMemcpyAsync");
        wait();
    }

    void launch(ncclResult_t rc) {
        if (rc != ncclSuccess && rc != ncclInProgress)
            fail(std::string("NCCL: ") + m_cu.nccl_error_string(rc));
    }

    // Waits for the stream while watching NCCL's async error, the control plane and the timeout.
    void wait() {
        const auto deadline = Clock::now() + m_opts.timeout;
        for (;;) {
            const cudaError_t q = m_cu.stream_query(m_stream);
            if (q == cudaSuccess) return;
            if (q != cudaErrorNotReady) fail(std::string("CUDA: ") + m_cu.get_error_string(q));
            ncclResult_t state = ncclSuccess;
            m_cu.comm_get_async_error(m_comm, &state);
            if (state != ncclSuccess && state != ncclInProgress)
                fail(std::string("NCCL: ") + m_cu.nccl_error_string(state));
            if (Clock::now() > deadline)
                fail("no progress for " + std::to_string(m_opts.timeout.count() / 1000) +
                     " s in an NCCL collective");
            try {
                m_rv.check_control();
            } catch (const CommError&) {
                m_failed = true;
                m_cu.comm_abort(m_comm);
                m_comm = nullptr;
                throw;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }

    [[noreturn]] void fail(const std::string& message) {
        m_failed = true;
        m_cu.comm_abort(m_comm);
        m_comm = nullptr;
        throw CommError(CommErrorKind::peer_failed, message);
    }

    Rendezvous& m_rv;
    CommOptions m_opts;
    const CudaLibraries& m_cu;
    ncclComm_t m_comm = nullptr;
    cudaStream_t m_stream = nullptr;
    DeviceBuffer m_scratch;
    bool m_staged = false;
    bool m_failed = false;
};

} // namespace

int cuda_device_count() {
    const CudaLibraries* cu = cuda_runtime_if_present();
    if (cu == nullptr) return 0;
    int n = 0;
    if (cu->get_device_count(&n) != cudaSuccess) {
        cu->get_last_error();
        return 0;
    }
    return n;
}

NcclReadiness nccl_readiness(int rank, int local_rank) {
    NcclReadiness r;
    const int gpus = cuda_device_count();
    r.has_gpu = gpus > 0;
    if (!r.has_gpu) {
        r.problem = "no GPU";
        return r;
    }
    try {
        (void)cuda_libraries();
    } catch (const CommError& e) {
        r.problem = e.what();
        return r;
    }
    r.problem = gpu_per_rank_message(rank, local_rank, gpus);
    return r;
}

std::string nccl_libraries_description() {
    return cuda_libraries_description();
}

std::unique_ptr<Backend> make_nccl_backend(Rendezvous& rendezvous, const CommOptions& opts) {
    return std::make_unique<NcclBackend>(rendezvous, opts, cuda_libraries());
}

} // namespace ddl::runtime
