#include "remote/RemoteExecutor.hpp"

#include <atomic>
#include <thread>

namespace ddl {

namespace {

// What makes two endpoints the same connection: who, where, with which key and pins, and through whom.
std::string pool_key(const SshEndpoint& ep) {
    std::string key = ep.label() + "\n" + ep.key_path + "\n" + ep.known_hosts_path;
    if (ep.jump) key += "\nvia " + pool_key(*ep.jump);
    return key;
}

} // namespace

Result<SshSession> LibsshExecutor::take(const SshEndpoint& ep, std::chrono::milliseconds timeout,
                                        bool& reused) {
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        if (auto it = m_idle.find(pool_key(ep)); it != m_idle.end()) {
            SshSession s = std::move(it->second);
            m_idle.erase(it);
            reused = true;
            return s;
        }
    }
    reused = false;
    return SshSession::connect(ep, timeout);
}

void LibsshExecutor::keep(const SshEndpoint& ep, SshSession session) {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_keep) m_idle.emplace(pool_key(ep), std::move(session));
    // else: closed here, as it goes out of scope
}

void LibsshExecutor::keep_connections(bool on) {
    std::multimap<std::string, SshSession> closing; // disconnected outside the lock
    std::lock_guard<std::mutex> lock(m_mutex);
    m_keep = on;
    if (!on) closing.swap(m_idle);
}

Result<ExecResult> LibsshExecutor::exec(const SshEndpoint& ep, const std::string& command,
                                        std::chrono::milliseconds timeout) {
    const auto connect_timeout = std::min(timeout, std::chrono::milliseconds(30000));
    bool reused = false;
    auto s = take(ep, connect_timeout, reused);
    if (!s) return s.error();
    auto r = s->exec(command, "", timeout);
    if (!r && reused && !s->command_started()) { // the kept connection had gone: a new one
        s = SshSession::connect(ep, connect_timeout);
        if (!s) return s.error();
        r = s->exec(command, "", timeout);
    }
    // A command that ran to its end (whatever its exit status) leaves the connection usable.
    if (r) keep(ep, std::move(*s));
    return r;
}

Status LibsshExecutor::upload(const SshEndpoint& ep, const std::string& content,
                              const std::string& remote_path, int mode) {
    bool reused = false;
    auto s = take(ep, std::chrono::seconds(30), reused);
    if (!s) return s.error();
    auto r = s->upload(content, remote_path, mode);
    if (!r && reused) { // written to a temporary name and renamed: safe to do again on a new connection
        s = SshSession::connect(ep, std::chrono::seconds(30));
        if (!s) return s.error();
        r = s->upload(content, remote_path, mode);
    }
    if (r) keep(ep, std::move(*s));
    return r;
}

Status LibsshExecutor::wait_ready(const SshEndpoint& ep, std::chrono::milliseconds deadline) {
    auto end = std::chrono::steady_clock::now() + deadline;
    auto delay = std::chrono::milliseconds(200);
    std::string last;
    while (true) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        auto s = SshSession::connect(ep, std::max(left, std::chrono::milliseconds(1000)));
        if (s) {
            auto r = s->exec("true", "", std::chrono::seconds(10));
            if (r && r->ok()) return {};
            last = r ? "a test command failed" : r.error().message;
        } else {
            last = s.error().message;
            // A changed host key will not fix itself by waiting.
            if (last.find("CHANGED") != std::string::npos) return s.error();
        }
        std::this_thread::sleep_for(std::min(delay, std::chrono::duration_cast<std::chrono::milliseconds>(
                                                        end - std::chrono::steady_clock::now())));
        delay = std::min(delay * 2, std::chrono::milliseconds(3000));
    }
    return Error{"SSH to " + ep.label() + " not ready after " + std::to_string(deadline.count() / 1000) +
                 " s" + (last.empty() ? "" : " (last error: " + last + ")")};
}

void parallel_for(std::size_t count, std::size_t parallel, const std::function<void(std::size_t)>& fn) {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    std::size_t n = std::max<std::size_t>(1, std::min(parallel, count));
    for (std::size_t t = 0; t < n; ++t)
        threads.emplace_back([&] {
            for (std::size_t i = next++; i < count; i = next++)
                fn(i);
        });
    for (auto& t : threads)
        t.join();
}

} // namespace ddl
