#pragma once
// Runs N communicators on loopback, one thread each, and collects what each rank reports (Catch2's
// assertions are not thread-safe, so checks happen on the main thread afterwards).
#include "runtime/Communicator.hpp"
#include "runtime/Launcher.hpp"
#include "runtime/LocalTransport.hpp"

#include <functional>
#include <map>
#include <mutex>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ddl::runtime::testing {

// A port that was free a moment ago (the kernel picks it; reuse races are unlikely enough for tests).
inline int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

inline CommOptions loopback_options(int rank, int size, int port) {
    CommOptions o;
    o.rank = rank;
    o.size = size;
    o.master_addr = "127.0.0.1";
    o.master_port = port;
    o.iface = "lo";
    o.timeout = std::chrono::seconds(20);
    o.bootstrap_timeout = std::chrono::seconds(20);
    o.segment_bytes = 64 << 10; // several segments per chunk even for small test buffers
    return o;
}

// body returns "" on success or a description of what was wrong; exceptions are reported too.
inline std::vector<std::string> run_ranks(int n, const std::function<std::string(Communicator&)>& body,
                                          const std::function<void(CommOptions&)>& tweak = {}) {
    const int port = free_port();
    std::vector<std::string> results(static_cast<std::size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            try {
                CommOptions o = loopback_options(r, n, port);
                if (tweak) tweak(o);
                Communicator comm(o);
                results[static_cast<std::size_t>(r)] = body(comm);
            } catch (const std::exception& e) {
                results[static_cast<std::size_t>(r)] = std::string("exception: ") + e.what();
            }
        });
    }
    for (auto& t : threads)
        t.join();
    return results;
}

// Output of a program started on `ranks` local slots through the real launcher, by rank.
struct LocalRun {
    int exit_code = -1;
    std::map<int, std::vector<std::string>> lines; // by rank, without the "[r] " prefix
};

inline LocalRun run_local(int ranks, std::vector<std::string> argv) {
    LaunchOptions o;
    o.hosts = {HostfileEntry{"localhost", ranks, std::nullopt, 0}};
    o.argv = std::move(argv);
    o.master_addr = "127.0.0.1";
    o.master_port = free_port();
    o.iface = "lo";
    o.forward_signals = false;
    LocalRun run;
    std::mutex mutex;
    o.output = [&](const std::string& line, OutputStream) {
        std::lock_guard lock(mutex);
        const auto close = line.find(']');
        run.lines[std::stoi(line.substr(1, close - 1))].push_back(line.substr(close + 2));
    };
    LocalTransport transport;
    auto result = Launcher(transport).run(o);
    if (result.ok()) run.exit_code = result->exit_code;
    return run;
}

} // namespace ddl::runtime::testing
