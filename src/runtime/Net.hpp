#pragma once
// Address helpers for the bootstrap: name resolution (IPv4, IPv6, host names), listening and
// connecting with a deadline, and the address of a network interface.
#include "runtime/Socket.hpp"
#include "util/Result.hpp"

#include <string>
#include <sys/socket.h>

namespace ddl::runtime {

// "host:port", with IPv6 literals in brackets: "[fe80::1]:29500".
[[nodiscard]] std::string format_host_port(const std::string& host, int port);
[[nodiscard]] bool is_ipv6_literal(const std::string& host);

// Address family `host` resolves to first (AF_INET or AF_INET6).
[[nodiscard]] ddl::Result<int> resolve_family(const std::string& host);

// A listening TCP socket on the wildcard address of `family` (port 0: an ephemeral port).
[[nodiscard]] ddl::Result<Socket> listen_tcp(int family, int port, int backlog);
[[nodiscard]] ddl::Result<int> local_port(const Socket& socket);

// Connects to host:port, retrying refused/unreachable attempts until `deadline` (the listener may
// not be up yet: ranks start in any order).
[[nodiscard]] ddl::Result<Socket> connect_tcp(const std::string& host, int port, Clock::time_point deadline);
// accept(2) with a deadline.
[[nodiscard]] ddl::Result<Socket> accept_tcp(const Socket& listener, Clock::time_point deadline);

// The address a rank advertises: the first address of `iface` (preferring `family`), or, with an
// empty iface, of the first interface that is up, not loopback and not docker*. Falls back to the
// loopback address when nothing else exists.
// The local address the kernel would send from towards `host` (a connected UDP socket; nothing is
// sent). With several interfaces (a bastion's public and private links) this is the one peers reach.
[[nodiscard]] ddl::Result<std::string> source_address_towards(const std::string& host);

[[nodiscard]] ddl::Result<std::string> interface_address(const std::string& iface, int family);
[[nodiscard]] bool is_loopback_host(const std::string& host);
// Whether `host` (an address or a name) is an address of this machine: a socket can be bound to it.
// An Error when it does not resolve.
[[nodiscard]] ddl::Result<bool> is_local_address(const std::string& host);

} // namespace ddl::runtime
