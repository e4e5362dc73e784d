#include "runtime/Net.hpp"

#include "util/Strings.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ifaddrs.h>
#include <memory>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <thread>
#include <unistd.h>

namespace ddl::runtime {

namespace {

struct AddrInfoDeleter {
    void operator()(addrinfo* ai) const { ::freeaddrinfo(ai); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

std::string strip_brackets(const std::string& host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
    return host;
}

ddl::Result<AddrInfoPtr> resolve(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const std::string service = std::to_string(port);
    const int rc = ::getaddrinfo(strip_brackets(host).c_str(), service.c_str(), &hints, &list);
    if (rc != 0) return ddl::Error{"cannot resolve '" + host + "': " + ::gai_strerror(rc)};
    return AddrInfoPtr(list);
}

std::string address_text(const sockaddr* sa) {
    char text[INET6_ADDRSTRLEN] = {};
    if (sa->sa_family == AF_INET) {
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof text);
    } else {
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof text);
    }
    return text;
}

} // namespace

bool is_ipv6_literal(const std::string& host) {
    in6_addr addr{};
    return ::inet_pton(AF_INET6, strip_brackets(host).c_str(), &addr) == 1;
}

std::string format_host_port(const std::string& host, int port) {
    const std::string bare = strip_brackets(host);
    if (is_ipv6_literal(bare)) return "[" + bare + "]:" + std::to_string(port);
    return bare + ":" + std::to_string(port);
}

bool is_loopback_host(const std::string& host) {
    const std::string bare = strip_brackets(host);
    return bare == "localhost" || bare == "::1" || starts_with(bare, "127.");
}

ddl::Result<int> resolve_family(const std::string& host) {
    auto list = resolve(host, 0);
    if (!list) return list.error();
    return (*list)->ai_family;
}

ddl::Result<Socket> listen_tcp(int family, int port, int backlog) {
    Socket sock(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!sock.valid()) return ddl::errno_error("socket");
    int one = 1;
    ::setsockopt(sock.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = 0;
    if (family == AF_INET6) {
        int zero = 0; // dual stack, so IPv4 peers can reach an IPv6 master as well
        ::setsockopt(sock.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        sockaddr_in6 addr{};
        addr.sin6_family = AF_INET6;
        addr.sin6_addr = in6addr_any;
        addr.sin6_port = htons(static_cast<std::uint16_t>(port));
        rc = ::bind(sock.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    } else {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_ANY);
        addr.sin_port = htons(static_cast<std::uint16_t>(port));
        rc = ::bind(sock.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0) return ddl::errno_error("bind to port " + std::to_string(port));
    if (::listen(sock.fd(), backlog) != 0) return ddl::errno_error("listen");
    return sock;
}

ddl::Result<int> local_port(const Socket& socket) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(socket.fd(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return ddl::errno_error("getsockname");
    if (addr.ss_family == AF_INET6)
        return static_cast<int>(ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port));
    return static_cast<int>(ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port));
}

ddl::Result<Socket> connect_tcp(const std::string& host, int port, Clock::time_point deadline) {
    std::string last_error = "timed out";
    for (;;) {
        auto list = resolve(host, port);
        if (list) {
            for (addrinfo* ai = list->get(); ai != nullptr; ai = ai->ai_next) {
                Socket sock(::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
                if (!sock.valid()) continue;
                int rc = ::connect(sock.fd(), ai->ai_addr, ai->ai_addrlen);
                if (rc != 0 && errno == EINPROGRESS) {
                    pollfd pfd{sock.fd(), POLLOUT, 0};
                    const auto left =
                        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
                    rc = ::poll(
                        &pfd, 1,
                        static_cast<int>(std::max<long long>(0, std::min<long long>(left.count(), 5000))));
                    int err = ETIMEDOUT;
                    socklen_t len = sizeof err;
                    if (rc > 0) ::getsockopt(sock.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
                    errno = err;
                    rc = err == 0 ? 0 : -1;
                }
                if (rc == 0) {
                    sock.set_nonblocking(false);
                    return sock;
                }
                last_error = std::strerror(errno);
            }
        } else {
            last_error =
                list.error().message; // names may appear late (DNS, /etc/hosts written by a provisioner)
        }
        if (Clock::now() >= deadline) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return ddl::Error{"cannot connect to " + format_host_port(host, port) + ": " + last_error};
}

ddl::Result<Socket> accept_tcp(const Socket& listener, Clock::time_point deadline) {
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return ddl::Error{"timed out waiting for a connection"};
        pollfd pfd{listener.fd(), POLLIN, 0};
        const int rc = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
        if (rc < 0 && errno != EINTR) return ddl::errno_error("poll");
        if (rc <= 0) continue;
        Socket sock(::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC));
        if (sock.valid()) return sock;
        if (errno != EINTR && errno != ECONNABORTED && errno != EAGAIN) return ddl::errno_error("accept");
    }
}

ddl::Result<std::string> source_address_towards(const std::string& host) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* raw = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), "9", &hints, &raw); rc != 0)
        return ddl::Error{"cannot resolve " + host + ": " + gai_strerror(rc)};
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(raw, ::freeaddrinfo);
    for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
        int fd = ::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0) continue;
        sockaddr_storage local{};
        socklen_t len = sizeof local;
        bool ok = ::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0;
        ::close(fd);
        if (ok) return address_text(reinterpret_cast<const sockaddr*>(&local));
    }
    return ddl::Error{"no route to " + host};
}

ddl::Result<bool> is_local_address(const std::string& host) {
    auto list = resolve(host, 0);
    if (!list) return list.error();
    for (const addrinfo* ai = list->get(); ai != nullptr; ai = ai->ai_next) {
        Socket sock(::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        if (sock.valid() && ::bind(sock.fd(), ai->ai_addr, ai->ai_addrlen) == 0) return true;
    }
    return false;
}

ddl::Result<std::string> interface_address(const std::string& iface, int family) {
    ifaddrs* raw = nullptr;
    if (::getifaddrs(&raw) != 0) return ddl::errno_error("getifaddrs");
    std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> list(raw, ::freeifaddrs);
    auto usable = [&](const ifaddrs* ifa) {
        if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) return false;
        const int fam = ifa->ifa_addr->sa_family;
        if (fam != AF_INET && fam != AF_INET6) return false;
        if (fam == AF_INET6 &&
            IN6_IS_ADDR_LINKLOCAL(&reinterpret_cast<const sockaddr_in6*>(ifa->ifa_addr)->sin6_addr))
            return false; // would need a scope id that peers cannot know
        if (!iface.empty()) return iface == ifa->ifa_name;
        const std::string name = ifa->ifa_name;
        return (ifa->ifa_flags & IFF_LOOPBACK) == 0 && !starts_with(name, "docker");
    };
    // Two passes: the requested family first, then any family.
    for (int pass = 0; pass < 2; ++pass) {
        for (const ifaddrs* ifa = list.get(); ifa != nullptr; ifa = ifa->ifa_next) {
            if (!usable(ifa)) continue;
            if (pass == 0 && ifa->ifa_addr->sa_family != family) continue;
            return address_text(ifa->ifa_addr);
        }
    }
    if (!iface.empty())
        return ddl::Error{"network interface '" + iface + "' has no usable address (or does not exist)"};
    return std::string(family == AF_INET6 ? "::1" : "127.0.0.1");
}

} // namespace ddl::runtime
