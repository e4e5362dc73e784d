#pragma once
// Checks an OpenStack cloud can hold a cluster before Terraform creates anything: Keystone accepts the
// credentials; the flavors, the image and the external network exist; the project's quota (instances,
// cores, RAM, floating IPs, volume gigabytes and volumes) covers what the spec asks for. Every problem
// is collected and reported at once, e.g. "quota: 8 instances requested, 3 left".
#include "targets/openstack/OpenstackClient.hpp"
#include "targets/openstack/OpenstackSection.hpp"

#include <string>
#include <vector>

namespace ddl {

struct PreflightResult {
    std::vector<std::string> problems; // each a full sentence naming what and the fix
    std::vector<std::string> notes;    // what was checked, for progress output
};

class OpenstackPreflight {
public:
    explicit OpenstackPreflight(OpenstackClient& client) : m_client(client) {}
    // An Error only when the checks could not run (authentication, an unreachable or failing API);
    // what the cloud lacks is in problems.
    Result<PreflightResult> run(const Spec& spec);

private:
    Result<ApiResponse> get_ok(const std::string& service, const std::string& url);
    // One service's checks each (Nova flavors and limits, Glance image, Neutron networks and floating IPs,
    // Cinder volumes); a problem is recorded in `out`, an Error stops the pre-flight.
    Status check_compute(const Spec& spec, PreflightResult& out);
    Status check_image(const Spec& spec, PreflightResult& out);
    Status check_network(const Spec& spec, PreflightResult& out);
    Status check_volumes(const Spec& spec, PreflightResult& out);

    OpenstackClient& m_client;
};

} // namespace ddl
