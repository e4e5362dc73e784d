#include "runtime/FusionQueue.hpp"

#include <algorithm>
#include <functional>

namespace ddl::runtime {

FusionQueue::FusionQueue(Communicator& comm)
    : FusionQueue(comm, FusionOptions{comm.options().fusion_threshold, comm.options().cycle_time}) {}

FusionQueue::FusionQueue(Communicator& comm, FusionOptions opts) : m_comm(comm), m_opts(opts) {
    m_thread = std::thread([this] { loop(); });
}

FusionQueue::~FusionQueue() {
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
}

FusionQueue::Handle FusionQueue::submit(std::string name, void* buffer, std::size_t count, DataType type,
                                        ReduceOp op) {
    std::unique_lock lock(m_mutex);
    if (m_failure) throw *m_failure;
    const Handle h = m_next_handle++;
    m_pending.push_back(Entry{h, std::move(name), buffer, count, type, op});
    m_pending_bytes += count * element_size(type);
    const bool full = m_pending_bytes >= m_opts.threshold;
    lock.unlock();
    if (full) m_wake.notify_all();
    return h;
}

bool FusionQueue::done(Handle handle) {
    std::lock_guard lock(m_mutex);
    if (m_failure) throw *m_failure;
    return m_completed >= handle;
}

void FusionQueue::wait(Handle handle) {
    std::unique_lock lock(m_mutex);
    if (m_completed < handle) {
        m_wanted = std::max(m_wanted, handle);
        m_wake.notify_all();
    }
    m_progress.wait(lock, [&] { return m_completed >= handle || m_failure.has_value(); });
    if (m_completed < handle) throw *m_failure;
}

void FusionQueue::synchronize() {
    Handle last = 0;
    {
        std::lock_guard lock(m_mutex);
        last = m_next_handle - 1;
    }
    wait(last);
}

void FusionQueue::loop() {
    struct Offer {
        std::uint64_t count;
        std::uint64_t stopping;
    };
    const auto n = static_cast<std::size_t>(m_comm.size());
    std::vector<Offer> offers(n);
    for (;;) {
        Offer mine{};
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait_for(lock, m_opts.cycle_time, [&] {
                return m_stopping || m_pending_bytes >= m_opts.threshold ||
                       (m_wanted > m_completed && !m_pending.empty());
            });
            mine = {m_pending.size(), m_stopping ? 1u : 0u};
        }
        std::vector<Entry> batch;
        try {
            m_comm.allgather_bytes(&mine, offers.data(), sizeof(Offer));
            std::uint64_t take = mine.count;
            bool all_stopping = true;
            for (const Offer& o : offers) {
                take = std::min(take, o.count);
                all_stopping = all_stopping && o.stopping != 0;
            }
            if (take == 0 && all_stopping) return;
            if (take == 0) continue;
            {
                std::lock_guard lock(m_mutex);
                for (std::uint64_t i = 0; i < take; ++i) {
                    m_pending_bytes -= m_pending.front().count * element_size(m_pending.front().type);
                    batch.push_back(std::move(m_pending.front()));
                    m_pending.pop_front();
                }
            }
            // Consecutive entries of one type and op share an allreduce while they fit the threshold.
            std::size_t begin = 0;
            while (begin < batch.size()) {
                std::size_t end = begin + 1;
                std::size_t bytes = batch[begin].count * element_size(batch[begin].type);
                while (end < batch.size() && batch[end].type == batch[begin].type &&
                       batch[end].op == batch[begin].op &&
                       bytes + batch[end].count * element_size(batch[end].type) <= m_opts.threshold) {
                    bytes += batch[end].count * element_size(batch[end].type);
                    ++end;
                }
                reduce_batch(batch, begin, end);
                begin = end;
            }
            {
                std::lock_guard lock(m_mutex);
                m_completed = batch.back().handle;
            }
            m_progress.notify_all();
        } catch (const CommError& e) {
            std::lock_guard lock(m_mutex);
            m_failure = e;
            m_progress.notify_all();
            return;
        }
    }
}

void FusionQueue::reduce_batch(std::vector<Entry>& entries, std::size_t begin, std::size_t end) {
    if (end - begin == 1) {
        m_comm.allreduce(entries[begin].buffer, entries[begin].count, entries[begin].type, entries[begin].op);
        return;
    }
    m_spans.clear();
    for (std::size_t i = begin; i < end; ++i)
        m_spans.push_back(TensorSpan{entries[i].buffer, entries[i].count});
    m_comm.allreduce_fused(m_spans, entries[begin].type, entries[begin].op);
}

} // namespace ddl::runtime
