#pragma once
// What the spec loader asks of a target about its own section: the keys it reads and the rules that tie
// it to the rest of the spec. Each src/targets/<name>/ implements one; the registry lists them.
#include "spec/SectionReader.hpp"
#include "spec/Spec.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddl {

// A problem as a message and a hint, for a rule the loader places itself.
struct Refusal {
    std::string message;
    std::string hint;
    bool warning_only = false; // said at validate time, not refused (the setting can still be used)
};

class TargetKind {
public:
    virtual ~TargetKind() = default;

    virtual std::string name() const = 0;
    // The section with its defaults, as a spec without the section gets it.
    virtual std::unique_ptr<TargetSection> defaults() const = 0;
    // Reads the section's map (already checked to be a map) into spec.section.
    virtual void parse(SectionReader& r, const YAML::Node& section, Spec& spec) const = 0;
    // Rules across sections, once the whole document has been read.
    virtual void check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const {
        (void)r;
        (void)doc;
        (void)spec;
    }

    // The target's part of a starter spec (`ddl init --target NAME`), commented, valid as written.
    virtual std::string starter_body() const = 0;

    // Whether the spec must have the section (false where every key has a default).
    virtual bool section_required() const { return true; }
    // Whether nodes.master/nodes.workers size the cluster; false: the section does.
    virtual bool uses_node_groups() const { return false; }
    // Whether each node group must name a flavor (a cloud's machine size).
    virtual bool flavor_required() const { return false; }
    // Why nodes.spares cannot be had: the target does not make machines one by one; nullopt: it can.
    virtual std::optional<Refusal> refuse_spares() const { return std::nullopt; }
    // Where the node count is set, for a spec that gives `nodes:` to a target without node groups.
    virtual std::string node_count_hint() const { return ""; }
    // Why runtime.image (a training container) cannot be used; nullopt: it can.
    virtual std::optional<Refusal> refuse_training_image(const Spec& spec) const {
        (void)spec;
        return std::nullopt;
    }
    // Why autostop.action: stop cannot work: the target cannot stop its machines and start them again
    // keeping their disks; nullopt where it can (docs/spec.md, "autostop").
    virtual std::optional<Refusal> refuse_stop() const {
        return Refusal{"autostop.action: stop is not available on target " + name() +
                           ": it cannot stop its machines and start them again keeping their disks",
                       "use action: destroy"};
    }
    // Why autostop.node_credential cannot be had: the target has no credential it could scope to the
    // cluster's own machines; nullopt where it can (docs/security.md, "A credential on the master").
    virtual std::optional<Refusal> refuse_node_credential() const {
        return Refusal{"autostop.node_credential is not available on target " + name() +
                           ": only openstack and aws can give the master a credential scoped to the cluster",
                       "remove node_credential; run `ddl gc --expired -y` on a schedule instead"};
    }
    // Why `service` ("jupyter", "monitoring"), switched on in the spec, cannot run on the target's nodes
    // as `spec` makes them; nullopt: it can.
    virtual std::optional<Refusal> refuse_service(const Spec& spec, const std::string& service) const {
        (void)spec;
        (void)service;
        return std::nullopt;
    }
    // The container engine when the spec names none.
    virtual std::string default_container_engine() const { return "docker"; }
    // Why `engine` cannot run the training container here; nullopt: it can.
    virtual std::optional<Refusal> refuse_container_engine(const std::string& engine) const {
        (void)engine;
        return std::nullopt;
    }
};

// Every target the loader knows, in the order `ddl` lists them.
using TargetKinds = std::vector<const TargetKind*>;

} // namespace ddl
