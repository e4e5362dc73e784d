#pragma once
// One target's own section of the spec (`local:`, `openstack:` …) as its target folder defines it, behind
// the few questions the common code asks of any section. src/targets/<name>/ holds each implementation.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ddl {

struct Spec;

class TargetSection {
public:
    TargetSection() = default;
    TargetSection(const TargetSection&) = default;
    TargetSection& operator=(const TargetSection&) = default;
    virtual ~TargetSection() = default;

    virtual std::unique_ptr<TargetSection> clone() const = 0;
    // The section with every default filled in, as `spec.json` and state show it.
    virtual nlohmann::json to_json() const = 0;
    // How many nodes the section asks for; nullopt: the node groups (nodes.master/workers) say.
    virtual std::optional<int> node_count(const Spec&) const { return std::nullopt; }
    // Adds N spare nodes (nodes.spares) to the count the section sets; false where the node groups set it.
    virtual bool add_spare_nodes(int n) {
        (void)n;
        return false;
    }
    // GPUs the node named `node` (of `group`) should show; nullopt: its node group's `gpus`.
    virtual std::optional<int> expected_gpus(const Spec&, const std::string& node,
                                             const std::string& group) const {
        (void)node;
        (void)group;
        return std::nullopt;
    }
    // What nodes are, as the playbooks' `ddl_nodes_as` says it: "machines" unless the target makes
    // nodes of its own kind (the local target's namespaces or containers).
    virtual std::string nodes_are() const { return "machines"; }
    // Whether the configure phase installs the GPU driver and container toolkit (not where a service
    // runs the nodes on GPU hosts it manages).
    virtual bool installs_gpu_stack() const { return true; }
    // Variables the section adds to every configure run (rendered/ansible/vars.json), e.g. the Virtual
    // Wall's NAT switch; an empty object: none.
    virtual nlohmann::json ansible_vars() const { return nlohmann::json::object(); }
    // The rate of the links between nodes as the spec sets it; 0: not known.
    virtual std::uint64_t link_rate_bps() const { return 0; }
    // Options the target needs after the container engine's name (e.g. podman's OCI runtime).
    virtual std::vector<std::string> engine_options(const std::string& engine) const {
        (void)engine;
        return {};
    }
};

// A copyable owner of one TargetSection (copies clone it), so a Spec stays a value.
class SectionBox {
public:
    SectionBox() = default;
    explicit SectionBox(std::unique_ptr<TargetSection> p) : m_p(std::move(p)) {}
    SectionBox(const SectionBox& o) : m_p(o.m_p ? o.m_p->clone() : nullptr) {}
    SectionBox& operator=(const SectionBox& o) {
        if (this != &o) m_p = o.m_p ? o.m_p->clone() : nullptr;
        return *this;
    }
    SectionBox(SectionBox&&) noexcept = default;
    SectionBox& operator=(SectionBox&&) noexcept = default;
    ~SectionBox() = default;

    TargetSection* get() const { return m_p.get(); }

private:
    std::unique_ptr<TargetSection> m_p;
};

} // namespace ddl
