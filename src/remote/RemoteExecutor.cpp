#include "remote/RemoteExecutor.hpp"

#include <atomic>
#include <thread>

namespace ddl {

Result<ExecResult> LibsshExecutor::exec(const SshEndpoint& ep, const std::string& command,
                                        std::chrono::milliseconds timeout) {
    return exec_with_input(ep, command, "", timeout);
}

Result<ExecResult> LibsshExecutor::exec_with_input(const SshEndpoint& ep, const std::string& command,
                                                   const std::string& input,
                                                   std::chrono::milliseconds timeout) {
    auto s = SshSession::connect(ep, std::min(timeout, std::chrono::milliseconds(30000)));
    if (!s) return s.error();
    return s->exec(command, input, timeout);
}

Result<ExecResult> LibsshExecutor::exec_streaming(const SshEndpoint& ep, const std::string& command,
                                                  const std::function<bool(std::string_view)>& on_out,
                                                  std::chrono::milliseconds idle) {
    auto s = SshSession::connect(ep, std::min(idle, std::chrono::milliseconds(30000)));
    if (!s) return s.error();
    return s->exec_streaming(command, on_out, idle);
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
