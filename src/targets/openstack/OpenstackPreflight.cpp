#include "targets/openstack/OpenstackPreflight.hpp"

#include "util/Strings.hpp"
#include "util/Url.hpp"

#include <algorithm>
#include <functional>

namespace ddl {
namespace {

// Glance's next page: `next` is a path under the image endpoint's root ("/v2/images?limit=…&marker=…").
std::function<std::string(const nlohmann::json&)> glance_next(std::string root) {
    if (ends_with(root, "/v2")) root.resize(root.size() - 3);
    return [root](const nlohmann::json& body) -> std::string {
        if (!body.contains("next") || !body["next"].is_string()) return "";
        std::string next = body["next"].get<std::string>();
        if (next.empty() || starts_with(next, "https://") || starts_with(next, "http://")) return next;
        return root + (next.front() == '/' ? "" : "/") + next;
    };
}

long long number(const nlohmann::json& j, const char* key, long long fallback = 0) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return fallback;
    return j[key].get<long long>();
}

struct FlavorInfo {
    std::string name;
    long long vcpus = 0, ram_mb = 0;
};

// "quota: 8 instances requested, 3 left" when `need` exceeds what is left (max < 0: unlimited).
void check_quota(std::vector<std::string>& problems, std::vector<std::string>& notes, const std::string& what,
                 long long need, long long max, long long used, const std::string& unit = "") {
    if (max < 0) {
        notes.push_back(what + ": " + std::to_string(need) + unit + " needed, unlimited");
        return;
    }
    long long left = std::max(0LL, max - used);
    if (need > left)
        problems.push_back("quota: " + std::to_string(need) + unit + " " + what + " requested, " +
                           std::to_string(left) + unit + " left (limit " + std::to_string(max) + unit + ", " +
                           std::to_string(used) + unit + " in use); free some or ask the cloud's operators");
    else
        notes.push_back(what + ": " + std::to_string(need) + unit + " needed, " + std::to_string(left) +
                        unit + " left");
}

std::string nova_flavors_next(const nlohmann::json& body) {
    return nova_next_link(body, "flavors_links");
}

} // namespace

Result<ApiResponse> OpenstackPreflight::get_ok(const std::string& service, const std::string& url) {
    auto r = m_client.get(url);
    if (!r) return Error{service + ": " + r.error().message};
    if (r->status == 200) return r;
    std::string why = api_error_message(r->body);
    std::string tail = why.empty() ? "" : ": " + why;
    if (r->status == 401 || r->status == 403)
        return Error{service + ": GET " + url + " was refused (" + std::to_string(r->status) + tail +
                     "); the credentials lack a role on this project"};
    if (r->status == 404)
        return Error{service + ": GET " + url + " not found (404" + tail +
                     "); the service catalog points to a wrong endpoint"};
    return Error{service + ": GET " + url + " failed with HTTP " + std::to_string(r->status) + tail +
                 (r->status >= 500 ? " (a server error on the cloud's side; try again later or "
                                     "deploy with --skip-preflight)"
                                   : "")};
}

Result<nlohmann::json>
OpenstackPreflight::get_pages(const std::string& service, const std::string& url, const std::string& key,
                              const std::function<std::string(const nlohmann::json&)>& next_url,
                              PreflightResult& out) {
    nlohmann::json items = nlohmann::json::array();
    std::string page = url;
    for (int n = 0; n < k_max_pages && !page.empty(); ++n) {
        auto r = get_ok(service, page);
        if (!r) return r.error();
        if (r->body.contains(key) && r->body[key].is_array())
            for (const auto& item : r->body[key])
                items.push_back(item);
        page = next_url(r->body);
        if (!page.empty() && url_origin(page) != url_origin(url)) {
            // A proxy that rewrites https to http, or a link elsewhere: the token is not sent there.
            out.notes.push_back(service + ": did not follow the next page at " + page +
                                " (another server than " + url_origin(url) + "); the list may be incomplete");
            return items;
        }
    }
    if (!page.empty())
        out.notes.push_back(service + ": read the first " + std::to_string(k_max_pages) + " pages of " + url +
                            " only (the server still named a next page)");
    return items;
}

Status OpenstackPreflight::check_compute(const Spec& spec, PreflightResult& out) {
    auto& problems = out.problems;
    auto& notes = out.notes;
    const int nodes = 1 + spec.workers.count;
    const int workers = spec.workers.count;
    // --- Nova: flavors and absolute limits ---
    auto compute = m_client.endpoint("compute");
    if (!compute)
        return Error{"the service catalog has no compute (Nova) endpoint for this region/interface"};
    // Nova pages the list (osapi_max_limit, 1000 by default) and links the next page in flavors_links.
    auto all_flavors = get_pages("Nova", *compute + "/flavors/detail", "flavors", nova_flavors_next, out);
    if (!all_flavors) return all_flavors.error();
    std::vector<FlavorInfo> flavors;
    for (const auto& f : *all_flavors) {
        if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) continue;
        flavors.push_back({f["name"].get<std::string>(), number(f, "vcpus"), number(f, "ram")});
    }
    std::vector<std::string> flavor_names;
    flavor_names.reserve(flavors.size());
    for (const auto& f : flavors)
        flavor_names.push_back(f.name);
    auto find_flavor = [&](const std::string& name, const std::string& key) -> const FlavorInfo* {
        for (const auto& f : flavors)
            if (f.name == name) return &f;
        std::string msg = key + ": flavor \"" + name + "\" does not exist";
        if (auto m = closest_match(name, flavor_names))
            msg += "; did you mean \"" + *m + "\"?";
        else
            msg +=
                "; `openstack flavor list` shows the flavors (" + std::to_string(flavors.size()) + " here)";
        problems.push_back(msg);
        return nullptr;
    };
    const FlavorInfo* master = find_flavor(spec.master.flavor, "nodes.master.flavor");
    const FlavorInfo* worker =
        workers > 0 ? find_flavor(spec.workers.flavor.empty() ? spec.master.flavor : spec.workers.flavor,
                                  "nodes.workers.flavor")
                    : nullptr;
    auto limits_resp = get_ok("Nova", *compute + "/limits");
    if (!limits_resp) return limits_resp.error();
    nlohmann::json absolute;
    if (limits_resp->body.contains("limits") && limits_resp->body["limits"].is_object())
        absolute = limits_resp->body["limits"].value("absolute", nlohmann::json::object());
    check_quota(problems, notes, "instances", nodes, number(absolute, "maxTotalInstances", -1),
                number(absolute, "totalInstancesUsed"));
    if (master && (workers == 0 || worker)) {
        long long cores = master->vcpus + workers * (worker ? worker->vcpus : 0);
        long long ram = master->ram_mb + workers * (worker ? worker->ram_mb : 0);
        check_quota(problems, notes, "cores", cores, number(absolute, "maxTotalCores", -1),
                    number(absolute, "totalCoresUsed"));
        check_quota(problems, notes, "RAM", ram, number(absolute, "maxTotalRAMSize", -1),
                    number(absolute, "totalRAMUsed"), " MB");
    }

    return {};
}

Status OpenstackPreflight::check_image(const Spec& spec, PreflightResult& out) {
    auto& problems = out.problems;
    auto& notes = out.notes;
    // --- Glance: the image ---
    if (auto image = m_client.endpoint("image")) {
        std::string base = versioned_endpoint(*image, "v2");
        auto r = get_ok("Glance",
                        base + "/images?name=" + percent_encode(spec.target_section<OpenstackSpec>().image));
        if (!r) return r.error();
        bool found = r->body.contains("images") && r->body["images"].is_array() && !r->body["images"].empty();
        if (!found) {
            std::string msg = "openstack.image: image \"" + spec.target_section<OpenstackSpec>().image +
                              "\" does not exist";
            // Glance pages the list (at most api_limit_max, 1000 by default, a page) and names the next page
            // in `next`. The suggestions are a courtesy: a failing page leaves them out, not the check.
            auto all = get_pages("Glance", base + "/images?limit=1000", "images", glance_next(*image), out);
            std::vector<std::string> names;
            if (all)
                for (const auto& im : *all)
                    if (im.is_object() && im.contains("name") && im["name"].is_string())
                        names.push_back(im["name"].get<std::string>());
            if (auto m = closest_match(spec.target_section<OpenstackSpec>().image, names))
                msg += "; did you mean \"" + *m + "\"?";
            else
                msg += "; `openstack image list` shows the images";
            problems.push_back(msg);
        } else {
            notes.push_back("image " + spec.target_section<OpenstackSpec>().image + ": found");
        }
    } else {
        return Error{"the service catalog has no image (Glance) endpoint for this region/interface"};
    }

    return {};
}

Status OpenstackPreflight::check_network(const Spec& spec, PreflightResult& out) {
    auto& problems = out.problems;
    auto& notes = out.notes;
    // --- Neutron: external network, existing network, floating IP quota ---
    auto network = m_client.endpoint("network");
    if (!network)
        return Error{"the service catalog has no network (Neutron) endpoint for this region/interface"};
    std::string nbase = versioned_endpoint(*network, "v2.0");
    {
        auto r = get_ok("Neutron", nbase + "/networks?name=" +
                                       percent_encode(spec.target_section<OpenstackSpec>().external_network));
        if (!r) return r.error();
        const auto& nets = r->body.contains("networks") && r->body["networks"].is_array()
                               ? r->body["networks"]
                               : nlohmann::json::array();
        if (nets.empty()) {
            std::string msg = "openstack.external_network: network \"" +
                              spec.target_section<OpenstackSpec>().external_network + "\" does not exist";
            auto ext = get_ok("Neutron", nbase + "/networks?router:external=true");
            std::vector<std::string> names;
            if (ext && ext->body.contains("networks") && ext->body["networks"].is_array())
                for (const auto& n : ext->body["networks"])
                    if (n.is_object() && n.contains("name") && n["name"].is_string())
                        names.push_back(n["name"].get<std::string>());
            if (!names.empty()) msg += "; external networks here: " + join(names, ", ");
            problems.push_back(msg);
        } else if (!nets[0].is_object() || !nets[0].value("router:external", false)) {
            problems.push_back("openstack.external_network: \"" +
                               spec.target_section<OpenstackSpec>().external_network +
                               "\" is not an external network (router:external is false); floating IPs come "
                               "only from external networks");
        } else {
            notes.push_back("external network " + spec.target_section<OpenstackSpec>().external_network +
                            ": found");
        }
    }
    if (!spec.target_section<OpenstackSpec>().network.empty()) {
        auto r =
            get_ok("Neutron",
                   nbase + "/networks?name=" + percent_encode(spec.target_section<OpenstackSpec>().network));
        if (!r) return r.error();
        if (!r->body.contains("networks") || !r->body["networks"].is_array() || r->body["networks"].empty())
            problems.push_back("openstack.network: network \"" +
                               spec.target_section<OpenstackSpec>().network +
                               "\" does not exist; leave it out to let ddl create one");
    }
    {
        auto r = get_ok("Neutron", nbase + "/quotas/" + m_client.project_id() + "/details.json");
        if (!r) return r.error();
        nlohmann::json fip;
        if (r->body.contains("quota") && r->body["quota"].is_object())
            fip = r->body["quota"].value("floatingip", nlohmann::json::object());
        check_quota(problems, notes, "floating IPs", 1, number(fip, "limit", -1),
                    number(fip, "used") + number(fip, "reserved"));
    }

    return {};
}

Status OpenstackPreflight::check_volumes(const Spec& spec, PreflightResult& out) {
    auto& problems = out.problems;
    auto& notes = out.notes;
    const int nodes = 1 + spec.workers.count;
    // --- Cinder: boot volumes, when the cloud has a block-storage service ---
    std::optional<std::string> volume;
    for (const char* type : {"block-storage", "volumev3", "volume"})
        if (!volume) volume = m_client.endpoint(type);
    if (volume) {
        auto r = get_ok("Cinder", *volume + "/limits");
        if (!r) return r.error();
        nlohmann::json abs;
        if (r->body.contains("limits") && r->body["limits"].is_object())
            abs = r->body["limits"].value("absolute", nlohmann::json::object());
        check_quota(problems, notes, "volume storage",
                    static_cast<long long>(nodes) * spec.target_section<OpenstackSpec>().boot_volume_gb,
                    number(abs, "maxTotalVolumeGigabytes", -1), number(abs, "totalGigabytesUsed"), " GB");
        check_quota(problems, notes, "volumes", nodes, number(abs, "maxTotalVolumes", -1),
                    number(abs, "totalVolumesUsed"));
    } else {
        notes.push_back("no block-storage service in the catalog: volume quota not checked");
    }
    return {};
}

Result<PreflightResult> OpenstackPreflight::run(const Spec& spec) {
    PreflightResult out;
    if (auto s = m_client.authenticate(); !s) return s.error();
    out.notes.push_back("Keystone: authenticated, project " + m_client.project_id());
    for (auto check : {&OpenstackPreflight::check_compute, &OpenstackPreflight::check_image,
                       &OpenstackPreflight::check_network, &OpenstackPreflight::check_volumes})
        if (auto s = (this->*check)(spec, out); !s) return s.error();
    return out;
}

} // namespace ddl
