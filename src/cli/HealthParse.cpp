#include "cli/HealthParse.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

namespace ddl::cli {

namespace {

long long number_or(const std::string& v, long long fallback) {
    auto n = parse_int(trim(v));
    return n ? static_cast<long long>(*n) : fallback;
}

// "16x" -> 16, "4" -> 4, "N/A" -> 0.
int leading_int(const std::string& v) {
    std::string digits;
    for (char c : trim(v)) {
        if (!std::isdigit(static_cast<unsigned char>(c))) break;
        digits += c;
    }
    return digits.empty() ? 0 : static_cast<int>(number_or(digits, 0));
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Adds a counter to a sum that starts at -1 (nothing reported).
void add_count(long long& sum, const std::string& value) {
    const long long n = number_or(value, -1);
    if (n < 0) return;
    sum = std::max(sum, 0LL) + n;
}

// One leaf of the tree: its section path ("ECC Errors/Volatile"), name and value, for the GPU it is under.
void apply_leaf(GpuHealth& g, const std::vector<std::string>& path, const std::string& key,
                const std::string& value) {
    const std::string joined = join(path, "/");
    if (path.empty()) {
        if (key == "Product Name") g.product = value;
        return;
    }
    if (path[0] == "ECC Errors" && path.size() >= 2) {
        // R450+: "SRAM Uncorrectable", "DRAM Uncorrectable" (and, later, SRAM split into Parity and SEC-DED);
        // older drivers: "Double Bit" / "Single Bit" sections, of which only "Total" is counted.
        const bool old_layout = path.size() >= 3;
        const bool uncorrectable =
            old_layout ? path[2] == "Double Bit" && key == "Total" : contains(key, "Uncorrectable");
        const bool correctable = old_layout ? path[2] == "Single Bit" && key == "Total"
                                            : contains(key, "Correctable") && !contains(key, "Uncorrectable");
        if (path[1] == "Volatile" && uncorrectable) add_count(g.ecc_volatile_uncorrectable, value);
        if (path[1] == "Aggregate" && uncorrectable) add_count(g.ecc_aggregate_uncorrectable, value);
        if (path[1] == "Volatile" && correctable) add_count(g.ecc_volatile_correctable, value);
        return;
    }
    if (path[0] == "Retired Pages") {
        if (key == "Double Bit ECC") add_count(g.retired_dbe, value);
        if (starts_with(key, "Pending")) g.retired_pending = trim(value) == "Yes";
        return;
    }
    if (path[0] == "Remapped Rows" && path.size() == 1) {
        if (key == "Uncorrectable Error") add_count(g.remapped_uncorrectable, value);
        if (key == "Pending") g.remap_pending = trim(value) == "Yes";
        if (key == "Remapping Failure Occurred") g.remap_failed = trim(value) == "Yes";
        return;
    }
    if (joined == "PCI/GPU Link Info/PCIe Generation") {
        // R535+ prints "Device Current"/"Device Max" (and "Host Max") beside or instead of Current/Max.
        if (key == "Current" || key == "Device Current") g.pcie_gen_current = leading_int(value);
        if (key == "Max" || key == "Device Max") g.pcie_gen_max = leading_int(value);
        return;
    }
    if (joined == "PCI/GPU Link Info/Link Width") {
        if (key == "Current") g.width_current = leading_int(value);
        if (key == "Max") g.width_max = leading_int(value);
        return;
    }
    if ((path[0] == "Clocks Throttle Reasons" || path[0] == "Clocks Event Reasons") &&
        trim(value) == "Active")
        g.throttle_active.push_back(key);
}

} // namespace

SmiReport parse_nvidia_smi_q(const std::string& text) {
    SmiReport r;
    struct Open {
        std::size_t indent;
        std::string name;
    };
    std::vector<Open> stack; // sections below the GPU
    GpuHealth* gpu = nullptr;
    std::size_t gpu_indent = 0;
    for (const auto& raw : split_lines(text)) {
        const std::string line = trim(raw);
        if (line.empty() || starts_with(line, "=")) continue;
        const std::size_t indent = raw.find_first_not_of(' ');
        // A leaf is "Name<padding>: value"; a section header has no ": " (a bus id's colons have none).
        std::size_t sep = line.find(": ");
        if (sep == std::string::npos && ends_with(line, ":")) sep = line.size() - 1;
        static const std::regex k_gpu_header(R"(GPU [0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)");
        if (sep == std::string::npos && std::regex_match(line, k_gpu_header)) {
            r.gpus.push_back({});
            gpu = &r.gpus.back();
            gpu->bus_id = trim(line.substr(4));
            gpu_indent = indent;
            stack.clear();
            continue;
        }
        if (gpu && indent <= gpu_indent) gpu = nullptr; // back at the top level
        while (!stack.empty() && stack.back().indent >= indent)
            stack.pop_back();
        if (sep == std::string::npos) {
            stack.push_back({indent, line});
            continue;
        }
        const std::string key = trim(line.substr(0, sep));
        const std::string value = sep + 1 < line.size() ? trim(line.substr(sep + 1)) : std::string();
        if (!gpu) {
            if (key == "Driver Version") r.driver = value;
            if (key == "CUDA Version") r.cuda = value;
            if (key == "Attached GPUs") r.attached = static_cast<int>(number_or(value, 0));
            continue;
        }
        std::vector<std::string> path;
        path.reserve(stack.size());
        for (const auto& o : stack)
            path.push_back(o.name);
        apply_leaf(*gpu, path, key, value);
    }
    return r;
}

bool throttle_reason_is_fault(const std::string& reason) {
    return contains(reason, "HW ") || contains(reason, "Thermal") || contains(reason, "Power Brake");
}

std::vector<XidEvent> parse_xids(const std::string& kernel_log) {
    static const std::regex k_xid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): (\d+),?\s*(.*))");
    std::vector<XidEvent> out;
    for (const auto& line : split_lines(kernel_log)) {
        std::smatch m;
        if (!std::regex_search(line, m, k_xid)) continue;
        const std::string pci = m[1].str();
        const int code = static_cast<int>(number_or(m[2].str(), 0));
        auto it = std::find_if(out.begin(), out.end(),
                               [&](const XidEvent& e) { return e.pci == pci && e.code == code; });
        if (it == out.end()) {
            out.push_back({pci, code, 0, {}});
            it = out.end() - 1;
        }
        ++it->count;
        it->text = trim(m[3].str());
    }
    return out;
}

bool xid_is_hardware(int code) {
    static constexpr int k_hardware[] = {48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 121, 140};
    return std::find(std::begin(k_hardware), std::end(k_hardware), code) != std::end(k_hardware);
}

std::vector<std::string> parse_dcgmi_failures(const std::string& text) {
    std::vector<std::string> failed;
    for (const auto& line : split_lines(text)) {
        auto cells = split(line, '|');
        if (cells.size() < 3) continue;
        const std::string name = trim(cells[1]), result = trim(cells[2]);
        if (starts_with(result, "Fail")) failed.push_back(name);
    }
    return failed;
}

NcclTransport parse_nccl_transport(const std::string& log) {
    static const std::regex k_network(R"(Using network (\w+))");
    static const std::regex k_net(R"(NET/(IB|Socket)\s*:\s*Using \[\d+\]([^:\s]+))");
    NcclTransport t;
    for (const auto& line : split_lines(log)) {
        std::smatch m;
        if (std::regex_search(line, m, k_net)) {
            if (t.net.empty()) t.net = m[1].str();
            if (t.iface.empty()) t.iface = m[2].str();
        }
        if (std::regex_search(line, m, k_network)) t.net = m[1].str();
    }
    return t;
}

std::map<std::string, std::string> parse_sections(const std::string& text) {
    std::map<std::string, std::string> out;
    std::string* cur = nullptr;
    for (const auto& line : split_lines(text)) {
        if (starts_with(line, "@@ ")) {
            cur = &out[trim(line.substr(3))];
            continue;
        }
        if (cur) *cur += line + "\n";
    }
    return out;
}

std::map<std::string, DiskSpace> parse_disk_lines(const std::string& text) {
    std::map<std::string, DiskSpace> out;
    for (const auto& line : split_lines(text)) {
        auto f = split(trim(line), ' ');
        if (f.size() != 3) continue;
        auto avail = parse_int(f[1]), total = parse_int(f[2]);
        if (!avail || !total) continue;
        out[f[0]] = {static_cast<long long>(*avail), static_cast<long long>(*total)};
    }
    return out;
}

} // namespace ddl::cli
