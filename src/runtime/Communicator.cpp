#include "runtime/Communicator.hpp"

#include "runtime/NcclBackend.hpp"
#include "runtime/Rendezvous.hpp"
#include "runtime/TcpRing.hpp"

#include <cstdio>
#include <cstring>

namespace ddl::runtime {

namespace {

// Rank 0 decides for everyone: ranks choosing differently would wait on each other forever. With backend
// auto every rank first says whether NCCL can start there, so that one node without a usable CUDA runtime or
// NCCL (a driver too old for them, libraries missing) makes the whole job fall back to TCP with one line
// saying why, instead of failing at ncclCommInitRank.
BackendKind agree_on_backend(Rendezvous& rv, BackendKind requested, int local_rank, std::string& note) {
    std::string mine;
    if (requested == BackendKind::automatic) {
        const NcclReadiness r = nccl_readiness(rv.rank(), local_rank);
        mine = std::string(r.has_gpu ? "1" : "0") + r.problem;
    }
    std::vector<std::string> all =
        requested == BackendKind::automatic ? rv.gather_to_root(mine) : std::vector<std::string>{};
    std::string choice;
    if (rv.rank() == 0) {
        BackendKind kind = requested;
        if (kind == BackendKind::automatic) {
            kind = BackendKind::nccl;
            bool any_gpu = false;
            for (std::size_t r = 0; r < all.size(); ++r) {
                const std::string& a = all[r];
                any_gpu = any_gpu || (!a.empty() && a[0] == '1');
                if (a.size() > 1 && kind == BackendKind::nccl) {
                    kind = BackendKind::tcp;
                    note = "backend auto: tcp, since NCCL cannot start on " +
                           rv.describe(static_cast<int>(r)) + ": " + a.substr(1);
                }
            }
            if (!any_gpu) note.clear(); // CPU nodes: TCP is the plan, not a fallback
        }
        choice = std::string(backend_kind_name(kind)) + "\n" + note;
    }
    rv.broadcast_from_root(choice);
    const std::size_t nl = choice.find('\n');
    note = nl == std::string::npos ? std::string() : choice.substr(nl + 1);
    return choice.substr(0, nl) == "nccl" ? BackendKind::nccl : BackendKind::tcp;
}

} // namespace

Communicator::Communicator(const CommOptions& opts) : m_opts(opts) {
    m_rendezvous = std::make_unique<Rendezvous>(opts);
    try {
        const BackendKind kind =
            agree_on_backend(*m_rendezvous, opts.backend, opts.local_rank, m_backend_note);
        if (!m_backend_note.empty() && m_rendezvous->rank() == 0)
            std::fprintf(stderr, "ddlcomm: %s\n", m_backend_note.c_str());
        if (kind == BackendKind::nccl) {
            m_backend = make_nccl_backend(*m_rendezvous, opts);
            if (!m_backend)
                throw CommError(
                    CommErrorKind::invalid_argument,
                    "the NCCL backend was requested but this libddlcomm was built without CUDA/NCCL");
        } else {
            m_backend = std::make_unique<TcpRing>(*m_rendezvous, opts);
        }
    } catch (const CommError& e) {
        m_rendezvous->report_failure(e);
        throw;
    }
}

std::unique_ptr<Communicator> Communicator::from_env() {
    auto opts = comm_options_from_env();
    if (!opts) throw CommError(CommErrorKind::invalid_argument, "libddlcomm: " + opts.error().message);
    return std::make_unique<Communicator>(*opts);
}

Communicator::~Communicator() = default;

const char* Communicator::backend_name() const {
    return m_backend->name();
}

std::string Communicator::backend_libraries() const {
    return std::string(m_backend->name()) == "nccl" ? nccl_libraries_description() : std::string();
}

std::string Communicator::describe_peer(int rank) const {
    return m_rendezvous->describe(rank);
}

template <typename F> void Communicator::guarded(F&& body) {
    if (m_failure) throw *m_failure;
    try {
        body();
    } catch (const CommError& e) {
        if (e.kind() == CommErrorKind::invalid_argument) throw; // a caller mistake breaks nothing
        m_failure = e;
        m_rendezvous->report_failure(e);
        throw;
    }
}

void Communicator::allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op) {
    guarded([&] {
        if (count > 0 && (send == nullptr || recv == nullptr))
            throw CommError(CommErrorKind::invalid_argument, "allreduce: null buffer");
        if (send != recv && count > 0) m_backend->copy(recv, send, count * element_size(type));
        m_backend->allreduce(recv, count, type, op);
    });
}

void Communicator::allreduce_fused(std::span<const TensorSpan> tensors, DataType type, ReduceOp op) {
    guarded([&] {
        for (const TensorSpan& t : tensors)
            if (t.count > 0 && t.data == nullptr)
                throw CommError(CommErrorKind::invalid_argument, "allreduce: null buffer");
        m_backend->allreduce_fused(tensors, type, op);
    });
}

void Communicator::broadcast(void* buffer, std::size_t count, DataType type, int root) {
    guarded([&] {
        if (root < 0 || root >= size())
            throw CommError(CommErrorKind::invalid_argument,
                            "broadcast: root " + std::to_string(root) + " is not a rank");
        if (count > 0 && buffer == nullptr)
            throw CommError(CommErrorKind::invalid_argument, "broadcast: null buffer");
        m_backend->broadcast(buffer, count * element_size(type), root);
    });
}

void Communicator::allgather(const void* send, void* recv, std::size_t count, DataType type) {
    allgather_bytes(send, recv, count * element_size(type));
}

void Communicator::allgather_bytes(const void* send, void* recv, std::size_t bytes) {
    guarded([&] {
        if (bytes > 0 && (send == nullptr || recv == nullptr))
            throw CommError(CommErrorKind::invalid_argument, "allgather: null buffer");
        auto* mine = static_cast<std::byte*>(recv) + bytes * static_cast<std::size_t>(rank());
        if (bytes > 0 && send != mine) m_backend->copy(mine, send, bytes);
        m_backend->allgather(recv, bytes);
    });
}

void Communicator::barrier() {
    // An allgather completes on a rank only after every rank has contributed.
    std::vector<std::byte> all(static_cast<std::size_t>(size()));
    const std::byte mine{1};
    allgather_bytes(&mine, all.data(), 1);
}

} // namespace ddl::runtime
