#pragma once
// FusionQueue: tensor fusion as Horovod does it. A training loop submits many small named buffers
// without waiting; a background thread batches them (up to `threshold` bytes) and reduces each batch
// with one fused allreduce (Communicator::allreduce_fused: in place on the TCP ring, no fusion buffer),
// every `cycle_time` or as soon as a threshold's worth is pending or someone waits.
//
// Ordering: each cycle, the ranks agree (a tiny allgather) on how many of their pending submissions to
// take: the minimum over ranks. Submissions are taken in submission order, so batches are identical on
// every rank as long as every rank submits the same sequence of (size, type, op), which a data-parallel
// loop does. Names only label submissions (as in Horovod's API); they are not compared across ranks.
//
// While a FusionQueue lives it owns the communicator: make no other calls on it from any thread.
// Destroying the queue waits for every rank's queue to drain (all ranks must destroy theirs).
#include "runtime/Communicator.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ddl::runtime {

struct FusionOptions {
    std::size_t threshold = 64u << 20;
    std::chrono::milliseconds cycle_time{5};
};

class FusionQueue {
public:
    using Handle = std::uint64_t;

    // Defaults from the communicator's options (DDL_FUSION_THRESHOLD, DDL_CYCLE_TIME_MS).
    explicit FusionQueue(Communicator& comm);
    FusionQueue(Communicator& comm, FusionOptions opts);
    ~FusionQueue();
    FusionQueue(const FusionQueue&) = delete;
    FusionQueue& operator=(const FusionQueue&) = delete;

    // Queues an in-place allreduce of `buffer`; the buffer must stay alive and untouched until done.
    [[nodiscard]] Handle submit(std::string name, void* buffer, std::size_t count, DataType type,
                                ReduceOp op);
    // Blocks until that submission is reduced; throws CommError if the queue failed.
    void wait(Handle handle);
    // Blocks until everything submitted so far is reduced.
    void synchronize();
    [[nodiscard]] bool done(Handle handle);

private:
    struct Entry {
        Handle handle;
        std::string name;
        void* buffer;
        std::size_t count;
        DataType type;
        ReduceOp op;
    };

    void loop();
    void reduce_batch(std::vector<Entry>& entries, std::size_t begin, std::size_t end);

    Communicator& m_comm;
    FusionOptions m_opts;
    std::mutex m_mutex;
    std::condition_variable m_wake;     // the background thread
    std::condition_variable m_progress; // waiters
    std::deque<Entry> m_pending;
    std::size_t m_pending_bytes = 0;
    Handle m_next_handle = 1;
    Handle m_completed = 0; // every handle <= this is done
    Handle m_wanted = 0;    // someone waits for this handle: don't sleep a full cycle
    bool m_stopping = false;
    std::optional<CommError> m_failure;
    std::vector<TensorSpan> m_spans; // of the batch being reduced
    std::thread m_thread;
};

} // namespace ddl::runtime
