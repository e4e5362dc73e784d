#pragma once
// Target "virtualwall": imec Virtual Wall bare metal. With client: slices (the default of a spec without GENI
// keys) the nodes are SLICES Basic Infrastructure resources made with the `slices` CLI (VirtualwallSlices).
// With client: geni (login_pem set) provision
// speaks the GENI AM API v3 and the slice authority itself (VirtualwallGeni). With client: jfed-cli,
// provision runs the jFed experimenter CLI's `create` (request RSpec, slice URN, the user's login PEM,
// expiration, where to save the manifest) and reads the manifest; without it, `ddl deploy --manifest FILE`
// takes the manifest the jFed GUI saved. Nodes and their SSH logins come from the manifest. Destroy runs the
// CLI's `delete`, or says exactly which slice to delete by hand. Configure enables the nodes' IPv4 NAT first
// (virtualwall.enable_nat).
#include "net/XmlRpcClient.hpp"
#include "provision/TargetDriver.hpp"
#include "targets/virtualwall/RspecManifest.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"

namespace ddl {

class VirtualwallTarget : public TargetDriver,
                          public Lease,
                          public ConfigureHints,
                          public LeakedClusters,
                          public NodeReplacement {
public:
    TargetCapabilities capabilities() override {
        return {.lease = this,
                .leaked_clusters = this,
                .node_replacement = this,
                .configure_hints = this,
                .takes_manifest = true};
    }
    // `ddl deploy --replace NODE`: with client: slices, the node's resource destroyed and made again alone
    // (VirtualwallSlicesReplace.cpp); a GENI or jFed slice is one request for every node, so those clients
    // refuse it, naming destroy and deploy.
    Status remove_for_replace(Context& ctx, const std::string& node) override;
    bool replaces_one_node(const Spec& spec) const override;

    // `ddl gc --spec FILE` (client: slices): ddl's resources in the spec's SLICES experiment.
    bool needs_spec() const override { return true; }
    Result<std::vector<FoundCluster>> find_clusters(const Spec* spec, ProcessRunner& proc) const override;
    Status destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) override;

    Result<RenderedFiles> render(const Spec& spec, const RenderInputs& inputs) const override;
    Status preflight(const Context& ctx) override;
    Status provision(Context& ctx) override;
    Status destroy(Context& ctx) override;
    // `ddl renew`: the slice (SA) and its slivers (AM Renew) until now + hours (client: geni).
    Status renew_lease(Context& ctx, std::chrono::hours hours) override;
    // When the slivers (or the slice) expire, as provision and renew recorded it.
    std::optional<std::chrono::system_clock::time_point> lease_end(const ClusterState& state) const override;

    // The XML-RPC transport the GENI calls go through (tests give a scripted one).
    void set_transport(std::shared_ptr<XmlRpcTransport> t) { m_transport = std::move(t); }

    // The cluster's nodes from a manifest: one per node the spec asks for (master, worker1, ...), each
    // reached by the login for `user` (or the only login name there is) at the address the spec's
    // connect_via picks. An Error names the missing node, login or address and what to change.
    static Result<std::vector<NodeState>> nodes_from_manifest(const Manifest& manifest, const Spec& spec,
                                                              const std::string& key_path);

    std::string configure_failure_hint(const Context& ctx, const std::string& message) const override;

    // One call of the jFed experimenter CLI as its documentation ("Experimenter CLI 1 (legacy)",
    // https://doc.ilabt.imec.be/jfed-documentation/cli.html) describes it: a command (create, delete),
    // then the request RSpec, the slice and the user's login.
    struct JfedCall {
        std::string command;   // create | delete
        std::string slice_urn; // urn:publicid:IDN+wall2.ilabt.iminds.be:PROJECT+slice+NAME
        std::string rspec;     // the request RSpec (both commands take it)
        std::string login_pem; // -p
        std::string manifest;  // create: where the manifest RSpec is saved (--manifest)
        int expiration_hours = 24;
    };
    // argv of a call (java -jar for a .jar).
    static std::vector<std::string> jfed_argv(const std::string& jfed_cli, const JfedCall& call);
    // The slice URN jFed takes with -s: the project's slice authority on wall2 (the iLab.t authority,
    // whichever testbed the nodes are on).
    static std::string slice_urn(const std::string& project, const std::string& slice);

private:
    std::shared_ptr<XmlRpcTransport> m_transport = std::make_shared<CurlXmlRpcTransport>();
};

} // namespace ddl
