#include "util/Net.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace ddl {

std::string Cidr::text() const {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(v6 ? AF_INET6 : AF_INET, addr, buf, sizeof buf);
    return std::string(buf) + "/" + std::to_string(prefix);
}

std::uint64_t Cidr::size_v4() const {
    return v6 ? 0 : (std::uint64_t(1) << (32 - prefix));
}

std::string Cidr::v4_host(std::uint32_t index) const {
    std::uint32_t base = (std::uint32_t(addr[0]) << 24) | (std::uint32_t(addr[1]) << 16) |
                         (std::uint32_t(addr[2]) << 8) | std::uint32_t(addr[3]);
    std::uint32_t a = base + index;
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 255) + "." +
           std::to_string((a >> 8) & 255) + "." + std::to_string(a & 255);
}

bool Cidr::host_bits_zero() const {
    int bytes = v6 ? 16 : 4;
    for (int bit = prefix; bit < bytes * 8; ++bit) {
        if (addr[bit / 8] & (0x80 >> (bit % 8))) return false;
    }
    return true;
}

std::optional<Cidr> parse_cidr(std::string_view text) {
    auto slash = text.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    std::string host(text.substr(0, slash));
    auto prefix = parse_int(text.substr(slash + 1));
    Cidr c;
    if (inet_pton(AF_INET, host.c_str(), c.addr) == 1) {
        c.v6 = false;
        if (!prefix || *prefix < 0 || *prefix > 32) return std::nullopt;
    } else if (inet_pton(AF_INET6, host.c_str(), c.addr) == 1) {
        c.v6 = true;
        if (!prefix || *prefix < 0 || *prefix > 128) return std::nullopt;
    } else {
        return std::nullopt;
    }
    c.prefix = static_cast<int>(*prefix);
    return c;
}

bool cidr_overlap(const Cidr& a, const Cidr& b) {
    if (a.v6 != b.v6) return false;
    const int bits = std::min(a.prefix, b.prefix);
    for (int bit = 0; bit < bits; ++bit) {
        const auto mask = static_cast<std::uint8_t>(0x80 >> (bit % 8));
        if ((a.addr[bit / 8] & mask) != (b.addr[bit / 8] & mask)) return false;
    }
    return true;
}

std::optional<std::string> unusable_v4_block(const Cidr& net) {
    static const std::pair<const char*, const char*> k_blocks[] = {
        {"0.0.0.0/8", "unspecified (0.0.0.0/8)"},
        {"127.0.0.0/8", "loopback (127.0.0.0/8)"},
        {"169.254.0.0/16", "link-local (169.254.0.0/16)"},
        {"224.0.0.0/4", "multicast (224.0.0.0/4)"},
        {"240.0.0.0/4", "reserved (240.0.0.0/4, with the broadcast address)"},
    };
    if (net.v6) return std::nullopt;
    for (const auto& [block, what] : k_blocks)
        if (cidr_overlap(net, *parse_cidr(block))) return std::string(what);
    return std::nullopt;
}

Cidr cidr_network(const Cidr& address) {
    Cidr n = address;
    const int bytes = n.v6 ? 16 : 4;
    for (int bit = n.prefix; bit < bytes * 8; ++bit)
        n.addr[bit / 8] = static_cast<std::uint8_t>(n.addr[bit / 8] & ~(0x80 >> (bit % 8)));
    return n;
}

bool is_ipv4(std::string_view text) {
    unsigned char buf[16];
    return inet_pton(AF_INET, std::string(text).c_str(), buf) == 1;
}

bool is_ipv6(std::string_view text) {
    unsigned char buf[16];
    return inet_pton(AF_INET6, std::string(text).c_str(), buf) == 1;
}

std::optional<std::uint64_t> parse_rate(std::string_view text) {
    std::string t = to_lower(trim(text));
    if (t == "unlimited" || t == "none") return 0;
    struct Unit {
        const char* suffix;
        double factor;
    };
    static const Unit units[] = {{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1.0}};
    for (const auto& u : units) {
        if (!ends_with(t, u.suffix)) continue;
        std::string number = t.substr(0, t.size() - std::strlen(u.suffix));
        if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos)
            return std::nullopt;
        char* end = nullptr;
        double v = std::strtod(number.c_str(), &end);
        if (end != number.c_str() + number.size() || !(v > 0) || v * u.factor > 1e13) return std::nullopt;
        return static_cast<std::uint64_t>(std::llround(v * u.factor));
    }
    return std::nullopt;
}

std::string format_rate(std::uint64_t bps) {
    if (bps == 0) return "unlimited";
    if (bps % 1000000000 == 0) return std::to_string(bps / 1000000000) + "gbit";
    if (bps % 1000000 == 0) return std::to_string(bps / 1000000) + "mbit";
    if (bps % 1000 == 0) return std::to_string(bps / 1000) + "kbit";
    return std::to_string(bps) + "bit";
}

std::string host_for_port(const std::string& host) {
    return host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host;
}

bool is_host_address(std::string_view text) {
    if (is_ipv4(text) || is_ipv6(text)) return true;
    if (!text.empty() && text.back() == '.') text.remove_suffix(1);
    if (text.empty() || text.size() > 253) return false;
    bool last_all_digits = false;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('.', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view label = text.substr(start, end - start);
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
        last_all_digits = true;
        for (char c : label) {
            bool digit = c >= '0' && c <= '9';
            if (!digit && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && c != '-') return false;
            last_all_digits = last_all_digits && digit;
        }
        start = end + 1;
    }
    return !last_all_digits;
}

} // namespace ddl
