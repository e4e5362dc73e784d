#pragma once
// What `ddl doctor` (and the smoke test) conclude from what the nodes said: one Finding per check and
// node (or node pair), each failure with what was found, what was expected and what to do. Pure: the
// facts come from HealthChecks, the unit tests build them by hand.
#include "cli/HealthParse.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddl::cli {

enum class HealthStatus { passed, warning, failed, skipped };
const char* health_status_name(HealthStatus s);

struct Finding {
    std::string node; // "worker1", or "worker1 -> worker2" for a pair
    std::string check;
    HealthStatus status = HealthStatus::passed;
    std::string found;
    std::string expected;
    std::string fix;
};

// What one node said to the doctor's node script, parsed.
struct NodeFacts {
    std::string node;
    std::string error; // non-empty: the node was not reached (SSH), nothing else is known
    // Clock: this machine's time before and after the command, the node's time at its start (s, epoch).
    double sent = 0, received = 0, node_time = 0;
    bool smi_present = false;
    int smi_rc = 0;
    std::string smi_error;
    SmiReport smi;
    std::string cuda_runtime; // "12.9" from /etc/ddl/cuda.json (the runtime role's choice)
    std::string nccl;         // "2.21.5" from the same file
    std::vector<XidEvent> xids;
    bool dcgmi_present = false;
    std::vector<std::string> dcgmi_failed;
    std::map<std::string, DiskSpace> disks; // path -> space
    std::string iface;                      // the interface holding the node's cluster address
    int mtu = 0;
    std::map<std::string, std::string> resolved; // name -> the addresses it resolves to, space separated
    bool ib = false;                             // InfiniBand/RoCE devices (/sys/class/infiniband)
};

// What the spec and the state expect of a node.
struct NodeExpect {
    int gpus = 0;
    std::vector<std::string> folders;         // shared folder, scratch folder: free space checked
    std::map<std::string, std::string> names; // every node's name -> its cluster address
    long long min_free_kib = 1024LL * 1024;   // below this a folder fails
};

// Per node: reachable, GPUs seen vs expected, ECC, retired pages and remapped rows, PCIe link, throttle
// reasons, Xids, DCGM's diagnostic, free space, names.
std::vector<Finding> judge_node(const NodeFacts& facts, const NodeExpect& expect);

// Between nodes: driver, CUDA runtime and NCCL the same everywhere (the odd ones out named, the majority
// or the master's value expected), the same MTU, clocks within max_offset_s of the master's (only where
// the measurement's own uncertainty cannot explain the difference).
std::vector<Finding> judge_across(const std::vector<NodeFacts>& nodes, const std::string& master,
                                  double max_offset_s = 1.0);

// The findings that are failures, and whether there is any.
bool any_failed(const std::vector<Finding>& findings);

} // namespace ddl::cli
