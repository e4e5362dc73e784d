#pragma once
// Pure parsing of addresses, CIDRs and link rates (no sockets): used by the spec, the renderers and
// the local target alike.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddl {

struct Cidr {
    bool v6 = false;
    std::uint8_t addr[16] = {};
    int prefix = 0;
    std::string text() const;
    // Number of host addresses in an IPv4 network (2^(32-prefix)); 0 for IPv6.
    std::uint64_t size_v4() const;
    // The i-th address of an IPv4 network as dotted text.
    std::string v4_host(std::uint32_t index) const;
    bool is_any() const { return prefix == 0; }
    bool host_bits_zero() const;
};

std::optional<Cidr> parse_cidr(std::string_view text);
// Whether two networks share an address: same family, and equal in the bits of the shorter prefix.
bool cidr_overlap(const Cidr& a, const Cidr& b);
// Which special-purpose IPv4 block (RFC 6890) `net` overlaps where its addresses cannot be given to
// hosts: "unspecified (0.0.0.0/8)", "loopback (127.0.0.0/8)", "link-local (169.254.0.0/16)",
// "multicast (224.0.0.0/4)", "reserved (240.0.0.0/4, with the broadcast address)"; nullopt for private
// and other unicast networks, and for IPv6.
std::optional<std::string> unusable_v4_block(const Cidr& net);
// The network an address with this prefix is on (host bits cleared).
Cidr cidr_network(const Cidr& address);
bool is_ipv4(std::string_view text);
bool is_ipv6(std::string_view text);
// An IPv4 or IPv6 address, or a host name as RFC 1123 has it (labels of letters, digits and '-', 1-63
// characters, no '-' at either end, 253 in all, a trailing dot allowed). A name whose last label is all
// digits is not one: "999.1.1.1" is a mistyped address, not a host name.
bool is_host_address(std::string_view text);

// "1gbit", "100mbit", "10gbit", "500kbit", "1.5gbit" -> bits per second. "unlimited"/"none" -> 0.
std::optional<std::uint64_t> parse_rate(std::string_view text);
std::string format_rate(std::uint64_t bits_per_second);

// "host" or "[v6]" as it must appear in "host:port" and in URLs.
std::string host_for_port(const std::string& host);

} // namespace ddl
