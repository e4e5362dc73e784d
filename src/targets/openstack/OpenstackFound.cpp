// `ddl gc --spec FILE` on OpenStack from the cloud's side. The module marks what it creates: every server
// carries the metadata ddl_cluster, ddl_role and ddl_state (the state folder that deployed it), and
// ddl_expires (when its lifetime ends, read by `ddl gc --expired --spec`) where the spec sets one, every
// Neutron resource the tags "ddl" and "ddl-cluster=<name>", the key pair and server group are named
// "<name>-key" and "<name>-nodes". So a cluster whose state folder, and with it its Terraform state, is gone
// is found from the server list and removed through the APIs, as the api-ref documents them:
//   Compute API (https://docs.openstack.org/api-ref/compute/): "List Servers Detailed" (paging through
//   servers_links), "Delete Server" (204), "Show Server Details" (404 once it is gone), "Delete Keypair",
//   "List Server Groups", "Delete Server Group";
//   Networking API v2.0 (https://docs.openstack.org/api-ref/network/v2/): "Filtering by tags" (?tags=a,b:
//   all of them), the list and delete calls of floating IPs, ports, routers, subnets, networks and security
//   groups, "Remove interface from router".
// The order is the one Neutron accepts: floating IPs, servers (waited for), their ports, the router's
// interface and the router, subnets and networks, the security group, then the key pair and server group.
// A resource already gone (404) counts as removed, so a gc cut short can run again.
#include "provision/FoundClusters.hpp"
#include "provision/Sweep.hpp"
#include "targets/openstack/OpenstackTarget.hpp"
#include "util/Strings.hpp"
#include "util/Url.hpp"

#include <chrono>
#include <ctime>
#include <map>
#include <thread>

namespace ddl {
namespace {

constexpr int k_max_pages = 50;
constexpr auto k_server_delete_deadline = std::chrono::minutes(5);

std::string fail_text(const std::string& what, const ApiResponse& r) {
    const std::string why = api_error_message(r.body);
    return what + " answered HTTP " + std::to_string(r.status) + (why.empty() ? "" : " (" + why + ")");
}

// Every item of a list, following `next` while it stays on the first page's server.
Result<nlohmann::json> list_all(OpenstackClient& api, const std::string& url, const std::string& key,
                                const std::function<std::string(const nlohmann::json&)>& next) {
    nlohmann::json items = nlohmann::json::array();
    std::string page = url;
    for (int n = 0; n < k_max_pages && !page.empty(); ++n) {
        auto r = api.get(page);
        if (!r) return r.error();
        if (r->status != 200) return Error{fail_text("GET " + page, *r)};
        if (!r->body.contains(key) || !r->body[key].is_array())
            return Error{"GET " + page + " answered without a \"" + key + "\" list"};
        for (const auto& item : r->body[key])
            items.push_back(item);
        page = next ? next(r->body) : "";
        if (!page.empty() && url_origin(page) != url_origin(url))
            return Error{"GET " + url + ": its next page is on another server (" + page + ")"};
    }
    return items;
}

std::string tag_query(const std::string& cluster) {
    return "?tags=ddl," + percent_encode("ddl-cluster=" + cluster);
}

} // namespace

Result<std::unique_ptr<OpenstackTarget::Cloud>>
OpenstackTarget::connect(const std::string& cloud_name) const {
    auto cfg = CloudConfig::load(cloud_name, m_deps.sources);
    if (!cfg) return cfg.error();
    auto s = std::make_unique<Cloud>();
    s->http = m_deps.make_http();
    s->api = std::make_unique<OpenstackClient>(*s->http, cfg->auth, std::chrono::seconds(30));
    if (auto st = s->api->authenticate(); !st) return st.error();
    auto nova = s->api->endpoint("compute");
    auto neutron = s->api->endpoint("network");
    if (!nova || !neutron)
        return Error{"the service catalog of cloud " + cloud_name + " lists no " +
                     (nova ? "network" : "compute") + " endpoint for interface " + cfg->auth.interface};
    s->nova = *nova;
    s->neutron = versioned_endpoint(*neutron, "v2.0");
    return s;
}

Result<std::vector<FoundCluster>> OpenstackTarget::find_clusters(const Spec* spec,
                                                                 ProcessRunner& /*proc*/) const {
    const std::string cloud_name = spec->target_section<OpenstackSpec>().cloud;
    auto cloud = connect(cloud_name);
    if (!cloud) return cloud.error();
    auto servers = list_all(*(*cloud)->api, (*cloud)->nova + "/servers/detail", "servers",
                            [](const nlohmann::json& b) { return nova_next_link(b, "servers_links"); });
    if (!servers) return Error{"Nova: " + servers.error().message};
    FoundClusters clusters("servers", std::time(nullptr));
    for (const auto& server : *servers) {
        if (!server.is_object() || !server.contains("metadata") || !server["metadata"].is_object()) continue;
        const auto& meta = server["metadata"];
        const std::string cluster = meta.value("ddl_cluster", std::string());
        const std::string id = server.value("id", std::string());
        if (cluster.empty() || id.empty()) continue;
        auto& found = clusters.add(cluster, id, server.value("created", std::string()));
        if (found.state_dir.empty()) found.state_dir = meta.value("ddl_state", std::string());
        // The latest of its servers' ends (one form, so the text orders as the time does).
        const std::string expires = meta.value("ddl_expires", std::string());
        if (expires > found.expires) found.expires = expires;
        found.record["cloud"] = cloud_name;
        found.detail = std::to_string(clusters.machines(found)) + " server(s) on cloud " + cloud_name;
    }
    return clusters.take();
}

namespace {

// One DELETE (or PUT `body`) as the sweep sees it: the HTTP status as the code ("HTTP 404": already gone).
SweepItem item(OpenstackClient& api, const std::string& what, const std::string& url,
               const std::string& method = "DELETE", const nlohmann::json& body = nullptr) {
    return SweepItem{what, [&api, what, url, method, body]() -> Result<SweepAnswer> {
                         auto r = api.send(method, url, body);
                         if (!r) return r.error();
                         return SweepAnswer{r->status >= 200 && r->status < 300,
                                            "HTTP " + std::to_string(r->status), fail_text(what, *r)};
                     }};
}

bool http_gone(const std::string& code) {
    return code == "HTTP 404";
}

std::string label(const std::string& kind, const nlohmann::json& item) {
    const std::string name = item.value("name", std::string());
    return kind + " " +
           (name.empty() ? item.value("id", std::string()) : name + " (" + item.value("id", "") + ")");
}

// Nova deletes in the background: the ports are free once every server is gone.
Status wait_deleted(OpenstackClient& api, const std::string& nova, std::vector<std::string> servers) {
    const auto deadline = std::chrono::steady_clock::now() + k_server_delete_deadline;
    while (!servers.empty()) {
        std::vector<std::string> left;
        for (const auto& id : servers) {
            auto r = api.get(nova + "/servers/" + id);
            if (!r || r->status != 404) left.push_back(id);
        }
        servers = left;
        if (servers.empty()) break;
        if (std::chrono::steady_clock::now() > deadline)
            return Error{
                "server(s) " + join(servers, ", ") + " still not deleted after " +
                std::to_string(
                    std::chrono::duration_cast<std::chrono::seconds>(k_server_delete_deadline).count()) +
                " s; run ddl gc again once Nova has deleted them"};
        std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    return {};
}

// What the steps of one cluster's sweep share: the API, its endpoints, the cluster, and what one step
// lists or removes for a later one (the servers being deleted, the subnets).
struct OpenstackSweep {
    OpenstackClient& api;
    std::string nova, net;
    std::string cluster;
    std::vector<std::string> deleting; // servers whose delete was accepted (or that were gone already)
    nlohmann::json subnets = nlohmann::json::array();
};

// A step over each Neutron resource of `kind` tagged with the cluster (its list under `key`) that `add`
// turns into items.
SweepStep tagged_step(OpenstackSweep& sw, const std::string& name, const std::string& kind,
                      const std::string& key,
                      std::function<void(const nlohmann::json&, std::vector<SweepItem>&)> add) {
    SweepStep step{.name = name, .gone = http_gone};
    step.list = [&sw, kind, key, add = std::move(add)]() -> Result<std::vector<SweepItem>> {
        auto listed = list_all(sw.api, sw.net + "/" + kind + tag_query(sw.cluster), key, {});
        if (!listed) return Error{"Neutron: " + listed.error().message};
        std::vector<SweepItem> items;
        for (const auto& x : *listed)
            add(x, items);
        return items;
    };
    return step;
}

// Each tagged resource of `kind` deleted at `<neutron>/<kind>/<id>`.
SweepStep delete_tagged(OpenstackSweep& sw, const std::string& name, const std::string& kind,
                        const std::string& key, const std::string& what) {
    return tagged_step(sw, name, kind, key, [&sw, kind, what](const nlohmann::json& x, auto& items) {
        items.push_back(item(sw.api, label(what, x), sw.net + "/" + kind + "/" + x.value("id", "")));
    });
}

// The record's servers; Nova deletes in the background, so the step waits until they are gone.
SweepStep servers_step(OpenstackSweep& sw, const FoundCluster& found) {
    SweepStep step{.name = "servers", .gone = http_gone};
    std::vector<std::string> ids;
    for (const auto& s : found.record["servers"])
        ids.push_back(s.get<std::string>());
    step.list = [&sw, ids]() -> Result<std::vector<SweepItem>> {
        std::vector<SweepItem> items;
        items.reserve(ids.size());
        for (const auto& id : ids) {
            SweepItem i = item(sw.api, "server " + id, sw.nova + "/servers/" + id);
            i.remove = [&sw, id, remove = i.remove]() -> Result<SweepAnswer> {
                auto a = remove();
                if (a && (a->accepted || http_gone(a->code))) sw.deleting.push_back(id);
                return a;
            };
            items.push_back(std::move(i));
        }
        return items;
    };
    step.settle = [&sw] { return wait_deleted(sw.api, sw.nova, sw.deleting); };
    return step;
}

// The subnets are listed once, before the routers: each router's interfaces on them go first, then the
// router, then the subnets themselves.
std::vector<SweepStep> router_steps(OpenstackSweep& sw) {
    SweepStep list =
        tagged_step(sw, "subnet list", "subnets", "subnets",
                    [&sw](const nlohmann::json& subnet, auto&) { sw.subnets.push_back(subnet); });
    list.gone = nullptr;
    SweepStep routers =
        tagged_step(sw, "routers", "routers", "routers", [&sw](const nlohmann::json& router, auto& items) {
            const std::string rid = router.value("id", std::string());
            for (const auto& subnet : sw.subnets)
                items.push_back(item(sw.api,
                                     "interface of router " + router.value("name", rid) + " on subnet " +
                                         subnet.value("name", ""),
                                     sw.net + "/routers/" + rid + "/remove_router_interface", "PUT",
                                     nlohmann::json{{"subnet_id", subnet.value("id", "")}}));
            items.push_back(item(sw.api, label("router", router), sw.net + "/routers/" + rid));
        });
    SweepStep subnets{.name = "subnets", .gone = http_gone};
    subnets.list = [&sw]() -> Result<std::vector<SweepItem>> {
        std::vector<SweepItem> items;
        for (const auto& subnet : sw.subnets)
            items.push_back(
                item(sw.api, label("subnet", subnet), sw.net + "/subnets/" + subnet.value("id", "")));
        return items;
    };
    return {list, routers, subnets};
}

// The key pair and server group Nova holds under the cluster's names.
std::vector<SweepStep> nova_steps(OpenstackSweep& sw) {
    SweepStep key{.name = "key pair", .gone = http_gone};
    key.list = [&sw]() -> Result<std::vector<SweepItem>> {
        return std::vector<SweepItem>{item(sw.api, "key pair " + sw.cluster + "-key",
                                           sw.nova + "/os-keypairs/" + percent_encode(sw.cluster + "-key"))};
    };
    SweepStep group{.name = "server group", .gone = http_gone};
    group.list = [&sw]() -> Result<std::vector<SweepItem>> {
        auto groups = list_all(sw.api, sw.nova + "/os-server-groups", "server_groups", {});
        if (!groups) return Error{"Nova: " + groups.error().message};
        std::vector<SweepItem> items;
        for (const auto& g : *groups)
            if (g.value("name", std::string()) == sw.cluster + "-nodes")
                items.push_back(item(sw.api, label("server group", g),
                                     sw.nova + "/os-server-groups/" + g.value("id", "")));
        return items;
    };
    return {key, group};
}

} // namespace

// The order is the one Neutron accepts (see the top of this file); already gone: HTTP 404.
Status OpenstackTarget::destroy_found(const FoundCluster& found, ProcessRunner& /*proc*/,
                                      Progress& progress) {
    const std::string cloud_name = found.record.value("cloud", std::string());
    if (cloud_name.empty() || !found.record.contains("servers"))
        return Error{"the record of " + found.cluster + " names no cloud or servers"};
    auto cloud = connect(cloud_name);
    if (!cloud) return cloud.error();
    OpenstackSweep sw{
        .api = *(*cloud)->api, .nova = (*cloud)->nova, .net = (*cloud)->neutron, .cluster = found.cluster};
    std::vector<SweepStep> steps;
    steps.push_back(tagged_step(
        sw, "floating IPs", "floatingips", "floatingips", [&sw](const nlohmann::json& fip, auto& items) {
            items.push_back(item(sw.api,
                                 "floating IP " + fip.value("floating_ip_address", fip.value("id", "")),
                                 sw.net + "/floatingips/" + fip.value("id", "")));
        }));
    steps.push_back(servers_step(sw, found));
    steps.push_back(
        tagged_step(sw, "ports", "ports", "ports", [&sw](const nlohmann::json& port, auto& items) {
            if (port.value("device_owner", std::string()) != "network:router_interface")
                items.push_back(item(sw.api, label("port", port), sw.net + "/ports/" + port.value("id", "")));
        }));
    for (auto& s : router_steps(sw))
        steps.push_back(std::move(s));
    steps.push_back(delete_tagged(sw, "networks", "networks", "networks", "network"));
    steps.push_back(
        delete_tagged(sw, "security groups", "security-groups", "security_groups", "security group"));
    for (auto& s : nova_steps(sw))
        steps.push_back(std::move(s));
    return run_sweep(found.cluster, steps, progress);
}

} // namespace ddl
