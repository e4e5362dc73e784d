#include "cli/HealthJudge.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

namespace ddl::cli {

const char* health_status_name(HealthStatus s) {
    switch (s) {
    case HealthStatus::passed:
        return "ok";
    case HealthStatus::warning:
        return "warn";
    case HealthStatus::failed:
        return "FAIL";
    case HealthStatus::skipped:
        return "skip";
    }
    return "?";
}

namespace {

std::string gib(long long kib) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f GiB", static_cast<double>(kib) / (1024.0 * 1024.0));
    return b;
}

// Collects the findings of one node, each check passing unless a problem was added for it.
class NodeJudge {
public:
    explicit NodeJudge(std::string node) : m_node(std::move(node)) {}

    void fail(const std::string& check, std::string found, std::string expected, std::string fix,
              HealthStatus st = HealthStatus::failed) {
        m_out.push_back({m_node, check, st, std::move(found), std::move(expected), std::move(fix)});
    }
    // A passing row for `check` unless one was added for it.
    void pass(const std::string& check, std::string found) {
        for (const auto& f : m_out)
            if (f.check == check) return;
        m_out.push_back({m_node, check, HealthStatus::passed, std::move(found), "", ""});
    }
    std::vector<Finding> take() { return std::move(m_out); }
    const std::string& node() const { return m_node; }

private:
    std::string m_node;
    std::vector<Finding> m_out;
};

void judge_gpus(NodeJudge& j, const NodeFacts& f, const NodeExpect& e) {
    const std::string& n = j.node();
    if (e.gpus > 0 && !f.smi_present)
        j.fail("gpus", "no nvidia-smi", std::to_string(e.gpus) + " GPU(s) (spec)",
               "the NVIDIA driver is not installed on " + n +
                   ": `ddl deploy --force-configure` runs its role");
    else if (f.smi_present && f.smi_rc != 0)
        j.fail("gpus", "nvidia-smi failed (exit " + std::to_string(f.smi_rc) + "): " + f.smi_error,
               std::to_string(e.gpus) + " GPU(s)",
               "the driver does not talk to the GPUs on " + n +
                   ": reboot it (a driver updated without a "
                   "reboot), or `ddl cordon " +
                   n + "` and have it repaired",
               e.gpus > 0 ? HealthStatus::failed : HealthStatus::warning);
    else if (static_cast<int>(f.smi.gpus.size()) < e.gpus)
        j.fail("gpus", std::to_string(f.smi.gpus.size()) + " GPU(s) seen", std::to_string(e.gpus) + " (spec)",
               "a GPU fell off the bus or was not found at boot: see the Xid rows, reboot " + n +
                   ", or `ddl cordon " + n + "` until the provider repairs it");
    if (!f.smi_present) {
        j.pass("gpus", e.gpus == 0 ? "none expected, none seen" : "");
        return;
    }
    j.pass("gpus", std::to_string(f.smi.gpus.size()) + " GPU(s), driver " + f.smi.driver);
    const std::string drain = "`ddl cordon " + n + "`, then ";
    for (const auto& g : f.smi.gpus) {
        const std::string at = "GPU " + g.bus_id + ": ";
        if (g.ecc_volatile_uncorrectable > 0)
            j.fail("ecc",
                   at + std::to_string(g.ecc_volatile_uncorrectable) +
                       " uncorrectable ECC error(s) since boot",
                   "0",
                   drain + "reset the GPU (`nvidia-smi -r -i " + g.bus_id +
                       "`) or reboot; if they come back, have the GPU replaced");
        else if (g.ecc_aggregate_uncorrectable > 0)
            j.fail("ecc",
                   at + std::to_string(g.ecc_aggregate_uncorrectable) +
                       " uncorrectable ECC error(s) in its lifetime",
                   "0", "none since boot: watch it; repeated errors mean the GPU needs replacing",
                   HealthStatus::warning);
        if (g.retired_pending || g.remap_pending)
            j.fail("ecc", at + (g.remap_pending ? "row remapping pending" : "page retirement pending"),
                   "none pending", drain + "reset the GPU or reboot " + n + " so the driver applies it");
        if (g.remap_failed)
            j.fail("ecc", at + "row remapping failed", "no failure",
                   drain + "have the GPU replaced: its memory has no spare rows left");
        if (g.width_max > 0 && g.width_current > 0 && g.width_current < g.width_max)
            j.fail("pcie", at + "link x" + std::to_string(g.width_current), "x" + std::to_string(g.width_max),
                   "the link trained narrow: reseat the GPU or its riser, or check the slot's lane setting "
                   "in the BIOS; until then `ddl cordon " +
                       n + "`");
        if (g.pcie_gen_max > 0 && g.pcie_gen_current > 0 && g.pcie_gen_current < g.pcie_gen_max)
            j.fail(
                "pcie", at + "gen " + std::to_string(g.pcie_gen_current),
                "gen " + std::to_string(g.pcie_gen_max),
                "normal while the GPU idles (power saving); if it stays low under load, check the slot and "
                "the BIOS's PCIe speed",
                HealthStatus::warning);
        std::vector<std::string> bad;
        for (const auto& r : g.throttle_active)
            if (throttle_reason_is_fault(r)) bad.push_back(r);
        if (!bad.empty())
            j.fail("throttle", at + join(bad, ", "), "no hardware or thermal slowdown",
                   "check " + n +
                       "'s cooling and power supply (fans, airflow, PSU); `nvidia-smi -q -d "
                       "PERFORMANCE,TEMPERATURE`");
    }
    j.pass("ecc", "no uncorrectable errors, nothing pending");
    j.pass("pcie", "links at their maximum width");
    j.pass("throttle", "no hardware slowdown");
}

void judge_kernel(NodeJudge& j, const NodeFacts& f) {
    for (const auto& x : f.xids) {
        const bool hw = xid_is_hardware(x.code);
        j.fail("xid",
               "Xid " + std::to_string(x.code) + " x" + std::to_string(x.count) + " on PCI " + x.pci +
                   (x.text.empty() ? "" : " (" + printable_utf8(x.text, 80) + ")"),
               "no Xid since boot",
               hw ? "a hardware Xid: reboot " + j.node() + "; if it recurs, `ddl cordon " + j.node() +
                        "` and have the GPU checked (NVIDIA's Xid catalogue)"
                  : "usually the application's fault (NVIDIA's Xid catalogue): check the job that ran then",
               hw ? HealthStatus::failed : HealthStatus::warning);
    }
    j.pass("xid", "none since boot");
    if (f.dcgmi_present && !f.dcgmi_failed.empty())
        j.fail("dcgm", "dcgmi diag -r 1 failed: " + join(f.dcgmi_failed, ", "), "every test passes",
               "`dcgmi diag -r 1 -v` on " + j.node() + " says why; `ddl cordon " + j.node() + "` meanwhile");
    if (f.dcgmi_present) j.pass("dcgm", "dcgmi diag -r 1 passed");
}

void judge_disks(NodeJudge& j, const NodeFacts& f, const NodeExpect& e) {
    for (const auto& path : e.folders) {
        auto it = f.disks.find(path);
        if (it == f.disks.end()) {
            j.fail("disk " + path, "not found", "a folder with " + gib(e.min_free_kib) + " free",
                   "create or mount " + path + " on " + j.node());
            continue;
        }
        if (it->second.avail_kib < e.min_free_kib)
            j.fail("disk " + path, gib(it->second.avail_kib) + " free of " + gib(it->second.total_kib),
                   gib(e.min_free_kib) + " or more", "free space in " + path + " on " + j.node());
        else
            j.pass("disk " + path, gib(it->second.avail_kib) + " free");
    }
}

void judge_names(NodeJudge& j, const NodeFacts& f, const NodeExpect& e) {
    for (const auto& [name, address] : e.names) {
        auto it = f.resolved.find(name);
        const std::string got = it == f.resolved.end() ? "" : trim(it->second);
        const auto all = split(got, ' ');
        if (got.empty())
            j.fail("resolve", name + " does not resolve", name + " -> " + address,
                   "add `" + address + " " + name + "` to /etc/hosts on " + j.node() + " (or fix its DNS)");
        else if (std::find(all.begin(), all.end(), address) == all.end())
            j.fail("resolve", name + " -> " + got, name + " -> " + address,
                   "correct the line for " + name + " in /etc/hosts on " + j.node() + " (or its DNS record)");
    }
    j.pass("resolve", "every node's name");
}

} // namespace

std::vector<Finding> judge_node(const NodeFacts& f, const NodeExpect& e) {
    NodeJudge j(f.node);
    if (!f.error.empty()) {
        j.fail("ssh", f.error, "reachable",
               "start the node or its sshd; `ddl status` shows its address; `ddl cordon " + f.node +
                   "` keeps ranks off it");
        return j.take();
    }
    judge_gpus(j, f, e);
    judge_kernel(j, f);
    judge_disks(j, f, e);
    judge_names(j, f, e);
    return j.take();
}

namespace {

// Every node whose `value` differs from the most common one (ties: the master's) gets a failure.
void same_everywhere(std::vector<Finding>& out, const std::vector<NodeFacts>& nodes,
                     const std::string& master, const std::string& check,
                     const std::function<std::string(const NodeFacts&)>& value, const std::string& fix) {
    std::map<std::string, std::vector<std::string>> by_value;
    std::string master_value;
    for (const auto& n : nodes) {
        if (!n.error.empty()) continue;
        const std::string v = value(n);
        if (v.empty()) continue;
        by_value[v].push_back(n.node);
        if (n.node == master) master_value = v;
    }
    if (by_value.empty()) return;
    std::string want = master_value;
    std::size_t most = 0;
    for (const auto& [v, who] : by_value) {
        if (who.size() > most || (who.size() == most && v == master_value)) {
            most = who.size();
            want = v;
        }
    }
    for (const auto& [v, who] : by_value) {
        for (const auto& n : who) {
            if (v == want)
                out.push_back({n, check, HealthStatus::passed, v, "", ""});
            else
                out.push_back({n, check, HealthStatus::failed, v,
                               want + " (as on " + join(by_value[want], ", ") + ")", fix + " on " + n});
        }
    }
}

} // namespace

std::vector<Finding> judge_across(const std::vector<NodeFacts>& nodes, const std::string& master,
                                  double max_offset_s) {
    std::vector<Finding> out;
    same_everywhere(
        out, nodes, master, "driver", [](const NodeFacts& n) { return n.smi.driver; },
        "install the same driver branch as the others (the spec's gpu.driver_branch; `ddl deploy "
        "--force-configure`), then reboot");
    same_everywhere(
        out, nodes, master, "cuda runtime", [](const NodeFacts& n) { return n.cuda_runtime; },
        "let the runtime role choose again (`ddl deploy --force-configure`) after aligning drivers");
    same_everywhere(
        out, nodes, master, "nccl", [](const NodeFacts& n) { return n.nccl; },
        "install the same libnccl2 (`ddl deploy --force-configure`)");
    same_everywhere(
        out, nodes, master, "mtu",
        [](const NodeFacts& n) { return n.mtu > 0 ? std::to_string(n.mtu) : std::string(); },
        "set the same MTU on the cluster interface (`ip link set IFACE mtu N`; jumbo frames need "
        "every switch along the path too)");
    const NodeFacts* m = nullptr;
    for (const auto& n : nodes)
        if (n.node == master && n.error.empty()) m = &n;
    if (!m) return out;
    // The node's clock was read somewhere between sent and received: its offset to this machine lies in
    // [node_time - received, node_time - sent]; the master's likewise. Only a gap beyond both ranges and
    // the allowed offset is a finding.
    const double m_lo = m->node_time - m->received, m_hi = m->node_time - m->sent;
    for (const auto& n : nodes) {
        if (!n.error.empty() || n.node == master || n.node_time <= 0) continue;
        const double lo = n.node_time - n.received, hi = n.node_time - n.sent;
        const double gap = lo > m_hi ? lo - m_hi : (m_lo > hi ? hi - m_lo : 0.0);
        char found[64];
        std::snprintf(found, sizeof found, "%+.2f s from %s", (lo + hi) / 2 - (m_lo + m_hi) / 2,
                      master.c_str());
        if (std::fabs(gap) > max_offset_s) {
            char want[48];
            std::snprintf(want, sizeof want, "within %.1f s", max_offset_s);
            out.push_back({n.node, "clock", HealthStatus::failed, found, want,
                           "run an NTP client on every node (chrony or systemd-timesyncd) and let " + n.node +
                               " sync (`chronyc makestep`)"});
        } else {
            out.push_back({n.node, "clock", HealthStatus::passed, found, "", ""});
        }
    }
    return out;
}

bool any_failed(const std::vector<Finding>& findings) {
    return std::any_of(findings.begin(), findings.end(),
                       [](const Finding& f) { return f.status == HealthStatus::failed; });
}

} // namespace ddl::cli
