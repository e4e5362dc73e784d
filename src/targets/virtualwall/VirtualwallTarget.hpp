#pragma once
// Target "virtualwall": imec Virtual Wall bare metal through jFed. With virtualwall.jfed_cli set, provision
// writes a run file for the jFed experimenter CLI (request RSpec, slice, project, expiration, wait until
// ready, where to save the manifest), runs it and reads the manifest; without it, `ddl deploy --manifest
// FILE` takes the manifest the jFed GUI saved. Nodes and their SSH logins come from the manifest.
// Destroy deletes the slice through the CLI, or says exactly which slice to delete by hand.
#include "provision/TargetDriver.hpp"
#include "targets/virtualwall/RspecManifest.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"

namespace ddl {

class VirtualwallTarget : public TargetDriver {
public:
    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    bool takes_manifest() const override { return true; }

    // The cluster's nodes from a manifest: one per node the spec asks for (master, worker1, ...), each
    // reached by the login for `user` (or the only login name there is) at the address the spec's
    // connect_via picks. An Error names the missing node, login or address and what to change.
    static Result<std::vector<NodeState>> nodes_from_manifest(const Manifest& manifest, const Spec& spec,
                                                              const std::string& key_path);

    // The run file ddl hands the jFed experimenter CLI (YAML), for action "create" or "delete".
    struct RunFile {
        std::string action; // create | delete
        std::string slice, project, authority;
        std::string rspec;           // create: the request RSpec
        std::string expiration;      // create: RFC 3339 UTC
        std::string manifest_output; // create: where the CLI saves the manifest
        std::string ssh_key;         // create: public key jFed installs for the user on every node
        int wait_minutes = 60;
    };
    static std::string format_run_file(const RunFile& run, const std::string& cluster);
    // argv that runs the CLI on a run file (java -jar for a .jar).
    static std::vector<std::string> cli_argv(const std::string& jfed_cli, const std::string& run_file);
};

} // namespace ddl
