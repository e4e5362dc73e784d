#pragma once
// Checks an OpenStack cloud can hold a cluster before Terraform creates anything: Keystone accepts the
// credentials; the flavors, the image and the external network exist; the project's quota (instances,
// cores, RAM, floating IPs, volume gigabytes and volumes) covers what the spec asks for. Every problem
// is collected and reported at once, e.g. "quota: 8 instances requested, 3 left".
#include "targets/openstack/OpenstackClient.hpp"
#include "targets/openstack/OpenstackSection.hpp"

#include <functional>
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
    // The most pages of one list (Nova flavors, Glance images) read before ddl goes on with what it has.
    static constexpr int k_max_pages = 20;

private:
    Result<ApiResponse> get_ok(const std::string& service, const std::string& url);
    // The items under `key` of `url` and of the pages after it: next_url(body) names the next page ("" on
    // the last). At most k_max_pages pages are read, so a server whose links loop cannot hold ddl; a note
    // says when the list was cut there.
    Result<nlohmann::json> get_pages(const std::string& service, const std::string& url,
                                     const std::string& key,
                                     const std::function<std::string(const nlohmann::json&)>& next_url,
                                     PreflightResult& out);
    // One service's checks each (Nova flavors and limits, Glance image, Neutron networks and floating IPs,
    // Cinder volumes); a problem is recorded in `out`, an Error stops the pre-flight.
    Status check_compute(const Spec& spec, PreflightResult& out);
    Status check_image(const Spec& spec, PreflightResult& out);
    Status check_network(const Spec& spec, PreflightResult& out);
    Status check_volumes(const Spec& spec, PreflightResult& out);

    OpenstackClient& m_client;
};

} // namespace ddl
