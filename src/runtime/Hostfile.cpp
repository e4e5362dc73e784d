#include "runtime/Hostfile.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cctype>

namespace ddl::runtime {

namespace {

constexpr int k_max_slots = 1 << 16;

// inet_pton reads a C string: an embedded NUL would make it judge only the part before it (found by
// fuzzing: "[1:db8::3\0...]:3" was taken for an IPv6 address).
bool is_ipv4(const std::string& host) {
    in_addr a{};
    return host.find('\0') == std::string::npos && ::inet_pton(AF_INET, host.c_str(), &a) == 1;
}

bool is_ipv6(const std::string& host) {
    in6_addr a{};
    return host.find('\0') == std::string::npos && ::inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

// RFC 1123 names; '_' tolerated because real inventories contain it.
bool is_hostname(const std::string& host) {
    if (host.empty() || host.size() > 253) return false;
    for (const std::string& label : split(host, '.')) {
        if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') return false;
        for (char c : label)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
    }
    return true;
}

std::vector<std::string> tokens(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : line) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) out.push_back(std::move(cur));
    return out;
}

std::optional<int> parse_count(const std::string& text) {
    auto v = parse_int(text);
    if (!v || *v < 1 || *v > k_max_slots) return std::nullopt;
    return static_cast<int>(*v);
}

} // namespace

const char* hostfile_format_name(HostfileFormat format) {
    switch (format) {
    case HostfileFormat::horovod:
        return "horovod";
    case HostfileFormat::mpich:
        return "mpich";
    default:
        return "openmpi";
    }
}

std::optional<HostfileFormat> hostfile_format_from_name(std::string_view name) {
    const std::string n = to_lower(name);
    if (n == "openmpi" || n == "prrte") return HostfileFormat::openmpi;
    if (n == "horovod") return HostfileFormat::horovod;
    if (n == "mpich" || n == "hydra") return HostfileFormat::mpich;
    return std::nullopt;
}

int total_slots(const std::vector<HostfileEntry>& entries) {
    int total = 0;
    for (const auto& e : entries)
        total += e.slots;
    return total;
}

namespace {

enum class HostParse { ok, bad, skip };

// The host part of a line: a name, an IPv4 address, an IPv6 address alone or in brackets, with MPICH's
// ":N" slot count. skip: the line cannot be read further.
HostParse parse_host_spec(const std::string& spec, const std::string& where, HostfileEntry& entry,
                          std::optional<int>& mpich_count, std::vector<std::string>& errors) {
    bool bad = false;
    if (spec.front() == '[') {
        const auto close = spec.find(']');
        if (close == std::string::npos) {
            errors.push_back(where + "'" + spec + "' has no closing ']'");
            return HostParse::skip;
        }
        entry.host = spec.substr(1, close - 1);
        const std::string rest = spec.substr(close + 1);
        if (!is_ipv6(entry.host)) {
            errors.push_back(where + "'" + entry.host + "' in brackets is not an IPv6 address");
            bad = true;
        }
        if (!rest.empty()) {
            if (rest.front() != ':' || !(mpich_count = parse_count(rest.substr(1)))) {
                errors.push_back(where + "expected ':N' with N a slot count >= 1 after ']' (got '" + rest +
                                 "')");
                bad = true;
            }
        }
    } else {
        const auto colons = std::count(spec.begin(), spec.end(), ':');
        if (colons == 1) {
            const auto colon = spec.find(':');
            entry.host = spec.substr(0, colon);
            mpich_count = parse_count(spec.substr(colon + 1));
            if (!mpich_count) {
                errors.push_back(where + "'" + spec.substr(colon + 1) +
                                 "' after ':' is not a slot count >= 1");
                bad = true;
            }
        } else if (colons > 1) {
            entry.host = spec;
            if (!is_ipv6(spec)) {
                errors.push_back(where + "'" + spec +
                                 "' is not an IPv6 address (write an IPv6 address with a count as [addr]:N)");
                bad = true;
            }
        } else {
            entry.host = spec;
        }
    }
    return bad ? HostParse::bad : HostParse::ok;
}

// The key=value options after the host (Open MPI's slots and max_slots). False when one is bad.
bool parse_host_options(const std::vector<std::string>& toks, const std::string& where, HostfileEntry& entry,
                        const std::optional<int>& mpich_count, std::vector<std::string>& errors) {
    bool bad = false;
    for (std::size_t i = 1; i < toks.size(); ++i) {
        const auto eq = toks[i].find('=');
        const std::string key = toks[i].substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : toks[i].substr(eq + 1);
        if (eq == std::string::npos) {
            errors.push_back(where + "expected key=value after the host, got '" + toks[i] + "'");
            bad = true;
        } else if (key == "slots") {
            auto n = parse_count(value);
            if (!n)
                errors.push_back(where + "slots must be an integer >= 1 (got '" + value + "')");
            else if (mpich_count)
                errors.push_back(where + "slot count given twice (':N' and slots=)");
            else
                entry.slots = *n;
            bad = bad || !n || mpich_count.has_value();
        } else if (key == "max_slots" || key == "max-slots") {
            auto n = parse_count(value);
            if (!n)
                errors.push_back(where + key + " must be an integer >= 1 (got '" + value + "')");
            else
                entry.max_slots = *n;
            bad = bad || !n;
        } else {
            auto hint = closest_match(key, {"slots", "max_slots"});
            errors.push_back(where + "unknown key '" + key + "'" +
                             (hint ? " (did you mean '" + *hint + "'?)" : ""));
            bad = true;
        }
    }
    return !bad;
}

} // namespace

ddl::Result<std::vector<HostfileEntry>> parse_hostfile(std::string_view text, const std::string& source) {
    std::vector<HostfileEntry> entries;
    std::vector<std::string> errors;
    int line_no = 0;
    for (const std::string& raw : split_lines(text)) {
        ++line_no;
        const std::string where = source + ":" + std::to_string(line_no) + ": error: ";
        const std::string line = trim(raw.substr(0, raw.find('#')));
        if (line.empty()) continue;
        auto toks = tokens(line);
        HostfileEntry entry;
        entry.line = line_no;
        std::optional<int> mpich_count;
        const HostParse host = parse_host_spec(toks[0], where, entry, mpich_count, errors);
        if (host == HostParse::skip) continue;
        bool bad = host == HostParse::bad;
        if (!bad && entry.host.empty()) {
            errors.push_back(where + "missing host name");
            bad = true;
        }
        if (!bad && !is_ipv4(entry.host) && !is_ipv6(entry.host) && !is_hostname(entry.host)) {
            errors.push_back(where + "'" + entry.host + "' is not a valid host name or address");
            bad = true;
        }
        if (mpich_count) entry.slots = *mpich_count;
        if (!parse_host_options(toks, where, entry, mpich_count, errors)) bad = true;
        if (!bad && entry.max_slots && *entry.max_slots < entry.slots) {
            errors.push_back(where + "max_slots=" + std::to_string(*entry.max_slots) +
                             " is below slots=" + std::to_string(entry.slots));
            bad = true;
        }
        if (bad) continue;
        auto same =
            std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.host == entry.host; });
        if (same != entries.end()) {
            // A limit holds only if every line of the host has one (found by fuzzing: "h slots=4" then
            // "h slots=5 max_slots=8" gave slots=9 max_slots=8).
            same->max_slots = same->max_slots && entry.max_slots
                                  ? std::optional<int>(*same->max_slots + *entry.max_slots)
                                  : std::nullopt;
            same->slots += entry.slots;
            if (same->slots > k_max_slots) {
                errors.push_back(where + "'" + entry.host + "' has " + std::to_string(same->slots) +
                                 " slots over all its lines; at most " + std::to_string(k_max_slots));
                same->slots = k_max_slots;
            }
        } else {
            entries.push_back(std::move(entry));
        }
    }
    if (!errors.empty()) return ddl::Error{join(errors, "\n")};
    if (entries.empty()) return ddl::Error{source + ": error: no hosts in the hostfile"};
    return entries;
}

ddl::Result<std::vector<HostfileEntry>> read_hostfile(const std::string& path) {
    // A FIFO or a device given as the hostfile would block ddl run forever: refused, as is a huge file.
    auto text = read_regular_file(path, 16u << 20);
    if (!text) return ddl::Error{"hostfile: " + text.error().message};
    return parse_hostfile(*text, path);
}

std::string write_hostfile(const std::vector<HostfileEntry>& entries, HostfileFormat format,
                           const std::vector<std::string>& header) {
    std::string out;
    if (format == HostfileFormat::openmpi)
        for (const auto& h : header)
            out += "# " + h + "\n";
    for (const auto& e : entries) {
        switch (format) {
        case HostfileFormat::mpich:
            out += (is_ipv6(e.host) ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.slots) + "\n";
            break;
        case HostfileFormat::horovod:
            out += e.host + " slots=" + std::to_string(e.slots) + "\n";
            break;
        case HostfileFormat::openmpi:
            out += e.host + " slots=" + std::to_string(e.slots);
            if (e.max_slots) out += " max_slots=" + std::to_string(*e.max_slots);
            out += "\n";
            break;
        }
    }
    return out;
}

} // namespace ddl::runtime
