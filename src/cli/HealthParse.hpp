#pragma once
// Pure parsers for what `ddl doctor` reads on a node: `nvidia-smi -q` (nvidia-smi(1), GPU ATTRIBUTES:
// ECC Errors, Retired Pages, Remapped Rows, PCI / GPU Link Info, Clocks Throttle/Event Reasons), the
// kernel log's NVRM Xid lines, `dcgmi diag` tables, NCCL_DEBUG=INFO lines and the sections of the node
// script's output. No I/O here: each is fed captured text in the unit tests.
#include <map>
#include <string>
#include <vector>

namespace ddl::cli {

// One GPU of `nvidia-smi -q`. Counters are -1 where nvidia-smi prints N/A or leaves them out.
struct GpuHealth {
    std::string bus_id;
    std::string product;
    long long ecc_volatile_uncorrectable = -1; // since the driver loaded (this boot)
    long long ecc_aggregate_uncorrectable = -1;
    long long ecc_volatile_correctable = -1;
    long long retired_dbe = -1;   // pages retired for double-bit errors
    bool retired_pending = false; // a retirement waits for a reboot / GPU reset
    long long remapped_uncorrectable = -1;
    bool remap_pending = false;
    bool remap_failed = false;
    int pcie_gen_current = 0, pcie_gen_max = 0; // 0: not reported
    int width_current = 0, width_max = 0;
    std::vector<std::string> throttle_active; // throttle (event) reasons reported Active
};

struct SmiReport {
    std::string driver;
    std::string cuda; // the driver's CUDA version
    int attached = 0; // "Attached GPUs"
    std::vector<GpuHealth> gpus;
};

// `nvidia-smi -q` text, any driver branch's layout (R450+ "SRAM/DRAM Uncorrectable", older "Double
// Bit / Total"; "Clocks Throttle Reasons" or, from R535, "Clocks Event Reasons").
SmiReport parse_nvidia_smi_q(const std::string& text);

// Throttle reasons that mean hardware trouble (thermal or power-brake slowdowns), not the idle or
// power-cap states a healthy GPU shows.
bool throttle_reason_is_fault(const std::string& reason);

// One Xid the kernel logged ("NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.").
struct XidEvent {
    std::string pci; // "0000:3b:00"
    int code = 0;
    int count = 0;    // how often this (pci, code) appears
    std::string text; // what follows the code on its last line
};
// Distinct (pci, code) in order of first appearance.
std::vector<XidEvent> parse_xids(const std::string& kernel_log);
// Xids that NVIDIA's Xid catalogue attributes to hardware, memory or the bus (48 DBE, 63/64 row remapping,
// 74 NVLink, 79 fallen off the bus, 92/94/95 ECC, 119/120 GSP, ...), as opposed to application faults.
bool xid_is_hardware(int code);

// `dcgmi diag -r 1`: the names of the rows whose result starts with "Fail".
std::vector<std::string> parse_dcgmi_failures(const std::string& text);

// What NCCL_DEBUG=INFO says it picked: "IB", "Socket" (NET/IB, NET/Socket, "Using network X") and the
// interface it names after "Using", "" where not said.
struct NcclTransport {
    std::string net;
    std::string iface;
};
NcclTransport parse_nccl_transport(const std::string& log);

// The node script's output: "@@ NAME" lines start sections; the text of each, by NAME.
std::map<std::string, std::string> parse_sections(const std::string& text);

// "PATH AVAIL_KIB TOTAL_KIB" lines (df -P -k's fields) to PATH -> {avail, total}; lines that do not parse
// are skipped.
struct DiskSpace {
    long long avail_kib = 0, total_kib = 0;
};
std::map<std::string, DiskSpace> parse_disk_lines(const std::string& text);

} // namespace ddl::cli
