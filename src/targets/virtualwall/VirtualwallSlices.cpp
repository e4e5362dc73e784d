#include "targets/virtualwall/VirtualwallSlices.hpp"

#include "remote/SshKeys.hpp"
#include "targets/virtualwall/SlicesCli.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"
#include "util/UtcTime.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>
#include <thread>
#include <unistd.h>

namespace ddl {
namespace {

const char* const k_install = "install it with `pip install slices-cli --extra-index-url="
                              "https://doc.slices-ri.eu/pypi/` (doc.slices-ri.eu, \"SLICES CLI\")";

std::string last_lines(const ProcessResult& r) {
    std::string text = trim(r.err.empty() ? r.out : r.err);
    auto lines = split_lines(text);
    if (lines.size() > 3) lines.erase(lines.begin(), lines.end() - 3);
    return join(lines, " / ");
}

} // namespace

Result<ProcessResult> slices_call(ProcessRunner& proc, const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
    auto r = proc.run({.argv = argv, .timeout = timeout});
    if (!r) return r.error();
    if (r->success()) return r;
    return slices_failure(argv, *r);
}

Error slices_failure(const std::vector<std::string>& argv, const ProcessResult& r) {
    std::string said = last_lines(r);
    std::string what = "`" + join(std::vector<std::string>(argv.begin() + 1, argv.end()), " ") + "` failed" +
                       (r.timed_out ? " (timed out)" : "") + (said.empty() ? "" : ": " + said);
    const std::string lower = to_lower(said);
    if (lower.find("credential") != std::string::npos || lower.find("log in") != std::string::npos ||
        lower.find("not logged in") != std::string::npos)
        what += "\n      log in again with `slices auth login` (the token lasts about an hour), then retry";
    return Error{what};
}

namespace {

// Whether `word` stands on its own in `text` (not inside a longer name).
bool has_word(const std::string& text, const std::string& word) {
    auto name_char = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    };
    for (auto at = text.find(word); !word.empty() && at != std::string::npos; at = text.find(word, at + 1)) {
        const bool left = at == 0 || !name_char(text[at - 1]);
        const std::size_t end = at + word.size();
        const bool right = end == text.size() || !name_char(text[end]) ||
                           (text[end] == '.' && (end + 1 == text.size() || !name_char(text[end + 1])));
        if (left && right) return true;
    }
    return false;
}

std::string prefix_of(const std::string& cluster) {
    return "ddl-" + cluster + "-";
}

const std::string& flavor_of(const Spec& spec, const NodeGroup& g) {
    return g.flavor.empty() ? spec.target_section<VirtualwallSpec>().flavor : g.flavor;
}

std::string public_key_of(const Context& ctx) {
    return (ctx.spec.access.private_key.empty() ? ctx.key_path() : ctx.spec.access.private_key) + ".pub";
}

// The experiment: joined when it is there and running, else created with the cluster's marker.
Status ensure_experiment(Context& ctx, const std::string& cli, const std::string& experiment) {
    const auto& v = ctx.spec.target_section<VirtualwallSpec>();
    auto shown = ctx.proc.run({.argv = {cli, "experiment", "show", experiment, "--format", "json"}});
    if (shown && shown->success()) {
        auto j = nlohmann::json::parse(shown->out, nullptr, false);
        const std::string expires = j.is_object() ? j.value("expires_at", std::string()) : std::string();
        auto end = utc_parse(expires);
        if (end && *end <= std::time(nullptr))
            return Error{"SLICES experiment " + experiment + " expired at " + expires +
                         ", and SLICES keeps an expired experiment's name: set virtualwall.experiment to a "
                         "new name in " +
                         ctx.spec.source_file + " and deploy again"};
        ctx.progress.note("    SLICES: joining experiment " + experiment);
        return {};
    }
    const std::string description =
        k_slices_state_lead + ctx.spec.name + k_slices_state_mark + ctx.cluster_dir();
    auto made =
        slices_call(ctx.proc, {cli, "experiment", "create", experiment, "-d", v.duration, "-D", description});
    if (!made) {
        std::string hint;
        if (made.error().message.find("already exists") != std::string::npos)
            hint =
                "\n      the name is taken (SLICES keeps the names of deleted and expired experiments): set "
                "virtualwall.experiment to a new name";
        return Error{"could not create SLICES experiment " + experiment + ": " + made.error().message + hint};
    }
    ctx.progress.note("    SLICES: created experiment " + experiment + " (" + trim(made->out) + ")");
    return {};
}

} // namespace

Result<std::vector<SlicesResource>> slices_list(ProcessRunner& proc, const std::string& cli,
                                                const std::string& site, const std::string& experiment) {
    auto r = slices_call(proc, slices_bi_list_argv(cli, site, experiment));
    if (!r) return r.error();
    return parse_slices_resources(r->out);
}

Status slices_remove(Context& ctx, const std::string& cli, const std::string& site,
                     const std::string& experiment, const std::vector<std::string>& names) {
    if (auto r = slices_call(ctx.proc, slices_bi_destroy_argv(cli, site, experiment, names),
                             std::chrono::minutes(15));
        !r)
        return Error{"could not remove the SLICES resources " + join(names, ", ") + ": " + r.error().message};
    // The CLI may stop a removal without saying so in its exit status: look again.
    auto after = slices_list(ctx.proc, cli, site, experiment);
    if (!after) return after.error();
    std::vector<std::string> left;
    for (const auto& r : *after)
        if (std::find(names.begin(), names.end(), r.name) != names.end()) left.push_back(r.name);
    if (!left.empty())
        return Error{"SLICES still lists " + join(left, ", ") + " in experiment " + experiment +
                     " after `slices bi destroy`; run `ddl destroy " + ctx.state.cluster + "` again"};
    ctx.progress.note("    SLICES: removed " + join(names, ", ") + " from experiment " + experiment);
    return {};
}

namespace {

// The cluster's resources by ddl node name.
std::map<std::string, SlicesResource> by_node(const std::string& cluster,
                                              const std::vector<SlicesResource>& all) {
    std::map<std::string, SlicesResource> out;
    for (const auto& r : all)
        if (auto node = slices_node_of(cluster, r.name)) out[*node] = r;
    return out;
}

// Asks for the master and the workers that are not there yet.
Status request_nodes(Context& ctx, const std::string& cli, const std::string& experiment,
                     const std::map<std::string, SlicesResource>& have) {
    const auto& v = ctx.spec.target_section<VirtualwallSpec>();
    const int workers = ctx.spec.workers.count;
    int workers_there = 0;
    for (const auto& [node, r] : have)
        if (node != "master") ++workers_there;
    std::vector<SlicesCreate> asks;
    SlicesCreate base{.site = v.site,
                      .experiment = experiment,
                      .image = v.image,
                      .duration = v.duration,
                      .ssh_key_file = public_key_of(ctx)};
    if (!have.count("master")) {
        auto c = base;
        c.name = prefix_of(ctx.spec.name) + "master";
        c.flavor = flavor_of(ctx.spec, ctx.spec.master);
        asks.push_back(c);
    }
    if (workers > 0 && workers_there == 0) {
        auto c = base;
        c.name = prefix_of(ctx.spec.name) + "w";
        c.flavor = flavor_of(ctx.spec, ctx.spec.workers);
        c.count = workers;
        asks.push_back(c);
    } else if (workers_there != workers) {
        // Workers removed by `ddl deploy --replace` are made again alone, under their recorded names.
        const auto recorded = ctx.state.target_data.value("resources", std::vector<std::string>{});
        for (int i = 1; i <= workers || i <= workers_there; ++i) {
            const std::string node = "worker" + std::to_string(i);
            if (have.count(node) && i <= workers) continue;
            auto name = std::find_if(recorded.begin(), recorded.end(), [&](const std::string& r) {
                return slices_node_of(ctx.spec.name, r) == node;
            });
            if (name == recorded.end() || i > workers)
                return Error{"experiment " + experiment + " has " + std::to_string(workers_there) +
                             " of this cluster's " + std::to_string(workers) +
                             " workers; ddl does not resize a SLICES cluster: `ddl destroy " + ctx.spec.name +
                             "`, then deploy again"};
            auto c = base;
            c.name = *name;
            c.flavor = flavor_of(ctx.spec, ctx.spec.workers);
            asks.push_back(c);
        }
    }
    for (const auto& c : asks) {
        ctx.progress.note("    SLICES: asking " + v.site + " for " + std::to_string(c.count) + " x " +
                          c.flavor + " (" + c.name + ", " + v.image + ", " + v.duration + ")");
        auto argv = slices_bi_create_argv(cli, c);
        // Without --wait: both groups boot at once, and the wait below says how far they are.
        argv.erase(std::find(argv.begin(), argv.end(), "--wait"));
        if (auto r = slices_call(ctx.proc, argv, std::chrono::minutes(10)); !r)
            return Error{"SLICES refused " + c.name + ": " + r.error().message};
    }
    return {};
}

// Waits until every node's resource is up; an Error names a failed one and its reason.
Result<std::map<std::string, SlicesResource>> wait_up(Context& ctx, const std::string& cli,
                                                      const std::string& experiment) {
    const auto& v = ctx.spec.target_section<VirtualwallSpec>();
    const std::size_t want = std::size_t{1} + static_cast<std::size_t>(ctx.spec.workers.count);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(60);
    std::string last;
    for (;;) {
        auto all = slices_list(ctx.proc, cli, v.site, experiment);
        if (!all) return all.error();
        auto nodes = by_node(ctx.spec.name, *all);
        std::size_t up = 0;
        std::vector<std::string> states;
        for (const auto& [node, r] : nodes) {
            if (!r.failure_reason.empty() || r.status == "failed" || r.status == "error")
                return Error{"SLICES resource " + r.name + " (" + node +
                             ") failed: " + (r.failure_reason.empty() ? r.status : r.failure_reason) +
                             "\n      `ddl destroy " + ctx.spec.name + "` removes the others; deploy again"};
            if (r.status == "up") ++up;
            states.push_back(node + " " + r.status);
        }
        bool all_named = nodes.count("master") == 1;
        for (int i = 1; i <= ctx.spec.workers.count; ++i)
            all_named = all_named && nodes.count("worker" + std::to_string(i)) == 1;
        if (nodes.size() == want && up == want && all_named) return nodes;
        std::string now = join(states, ", ");
        if (now != last) ctx.progress.note("    SLICES: " + (now.empty() ? "no resources yet" : now));
        last = now;
        if (std::chrono::steady_clock::now() > deadline)
            return Error{"the SLICES resources were not all up after 60 minutes (" + now + ")"};
        if (ctx.stop_requested()) return Error{"interrupted while waiting for the SLICES resources"};
        std::this_thread::sleep_for(std::chrono::seconds(up == nodes.size() && !nodes.empty() ? 1 : 5));
    }
}

std::string slices_earliest_expiry(const std::vector<SlicesResource>& rs) {
    std::string out;
    for (const auto& r : rs)
        if (!r.expires_at.empty() && (out.empty() || r.expires_at < out)) out = r.expires_at;
    return out;
}

} // namespace

std::optional<std::string> slices_node_of(const std::string& cluster, const std::string& resource) {
    const std::string prefix = prefix_of(cluster);
    if (resource.rfind(prefix, 0) != 0) return std::nullopt;
    const std::string rest = resource.substr(prefix.size());
    if (rest == "master" || rest == "master0") return std::string("master");
    if (rest.empty() || rest[0] != 'w') return std::nullopt;
    if (rest == "w") return std::string("worker1");
    auto k = parse_int(rest.substr(1));
    if (!k || *k < 0 || std::to_string(*k) != rest.substr(1)) return std::nullopt;
    return "worker" + std::to_string(*k + 1);
}

Status slices_preflight(const Context& ctx) {
    const auto& v = ctx.spec.target_section<VirtualwallSpec>();
    const std::string& cli = v.slices_cli;
    const bool found =
        cli.find('/') == std::string::npos ? !find_in_path(cli).empty() : access(cli.c_str(), X_OK) == 0;
    if (!found)
        return Error{"virtualwall.client: slices drives the SLICES CLI, and `" + cli + "` is not " +
                     (cli.find('/') == std::string::npos ? "on PATH" : "executable") + ": " + k_install +
                     ", log in with `slices auth login`, or set virtualwall.slices_cli to its path"};
    const std::string deployed_as = ctx.state.target_data.value("client", std::string());
    if (!deployed_as.empty() && deployed_as != "slices")
        return Error{
            "cluster " + ctx.spec.name + " was deployed with virtualwall.client: " + deployed_as +
            ", and this spec is a SLICES one (a virtualwall section without GENI keys is): add `client: " +
            deployed_as + "` to its virtualwall section"};
    if (!ctx.spec.access.private_key.empty() && !path_exists(ctx.spec.access.private_key + ".pub"))
        return Error{
            "access.private_key: " + ctx.spec.access.private_key +
            ".pub is missing (SLICES installs the public half on the nodes and its bastion): write it "
            "with `ssh-keygen -y -f " +
            ctx.spec.access.private_key + " > " + ctx.spec.access.private_key + ".pub`"};
    auto auth = ctx.proc.run({.argv = {cli, "auth", "show"}, .timeout = std::chrono::minutes(1)});
    if (!auth) return auth.error();
    if (!auth->success())
        return Error{
            "the SLICES CLI is not logged in (`slices auth show`: " + last_lines(*auth) +
            "): run `slices auth login` (it opens the SLICES portal in a browser), then deploy again"};
    if (!v.project.empty()) {
        auto shown = slices_call(ctx.proc, {cli, "project", "show"}, std::chrono::minutes(1));
        if (!shown) return shown.error();
        if (!has_word(shown->out, v.project))
            return Error{"the SLICES CLI's current project is not " + v.project +
                         " (virtualwall.project): run `slices project use " + v.project +
                         "`, or set virtualwall.project to the project `slices project show` names"};
    }
    std::set<std::string> flavors{flavor_of(ctx.spec, ctx.spec.master)};
    if (ctx.spec.workers.count > 0) flavors.insert(flavor_of(ctx.spec, ctx.spec.workers));
    auto offered =
        slices_call(ctx.proc, {cli, "bi", "--infra", v.site, "flavor", "list"}, std::chrono::minutes(1));
    if (!offered)
        return Error{"cannot list the flavors of SLICES site " + v.site + ": " + offered.error().message};
    for (const auto& f : flavors)
        if (!slices_listing_has(offered->out, f))
            return Error{"SLICES site " + v.site + " has no flavor " + f +
                         ": pick one of `slices bi --infra " + v.site +
                         " flavor list` for nodes.master/workers.flavor or virtualwall.flavor (GPU nodes: "
                         "pcgen05-gpu5090, pcgen08-gpu6000, ... on be-gent1-bi-baremetal1)"};
    auto images =
        slices_call(ctx.proc, {cli, "bi", "--infra", v.site, "diskimage", "list"}, std::chrono::minutes(1));
    if (!images)
        return Error{"cannot list the images of SLICES site " + v.site + ": " + images.error().message};
    if (!slices_listing_has(images->out, v.image))
        return Error{"SLICES site " + v.site + " has no image \"" + v.image +
                     "\": set virtualwall.image to one that `slices bi --infra " + v.site +
                     " diskimage list` shows (names match exactly, e.g. \"Ubuntu 22.04.5\")"};
    return {};
}

Status slices_provision(Context& ctx) {
    const auto& v = ctx.spec.target_section<VirtualwallSpec>();
    auto& td = ctx.state.target_data;
    const std::string cli = v.slices_cli;
    const std::string experiment = td.value("experiment", v.experiment_name(ctx.spec.name));
    td["client"] = "slices";
    td["site"] = v.site;
    td["experiment"] = experiment;
    td["slices_cli"] = cli;
    if (ctx.spec.access.private_key.empty())
        if (auto pub = ensure_keypair(ctx.key_path(), "ddl-" + ctx.spec.name); !pub) return pub.error();
    if (auto s = ensure_experiment(ctx, cli, experiment); !s) return s;
    // The site's bastion admits the keys registered with the account; the nodes get --ssh-key-file.
    if (auto r = slices_call(ctx.proc, {cli, "pubkey", "register", public_key_of(ctx)});
        !r && r.error().message.find("already") == std::string::npos)
        return Error{"could not register the cluster's public key with SLICES: " + r.error().message};
    auto all = slices_list(ctx.proc, cli, v.site, experiment);
    if (!all) return all.error();
    // From here resources may exist: destroy must look for them.
    td["resources_requested"] = true;
    if (auto s = ctx.save(); !s) return s;
    if (auto s = request_nodes(ctx, cli, experiment, by_node(ctx.spec.name, *all)); !s) return s;
    auto nodes = wait_up(ctx, cli, experiment);
    if (!nodes) return nodes.error();
    std::vector<SlicesResource> mine;
    ctx.state.nodes.clear();
    const std::string key =
        ctx.spec.access.private_key.empty() ? ctx.key_path() : ctx.spec.access.private_key;
    std::vector<std::string> wanted{"master"};
    for (int i = 1; i <= ctx.spec.workers.count; ++i)
        wanted.push_back("worker" + std::to_string(i));
    for (const auto& want : wanted) {
        const auto found = nodes->find(want);
        if (found == nodes->end()) return Error{"SLICES lists no resource for node " + want};
        const auto& r = found->second;
        mine.push_back(r);
        NodeState n;
        n.name = want;
        n.group = want == "master" ? "master" : "workers";
        n.address = !r.host.empty() ? r.host : (!r.public_ipv4.empty() ? r.public_ipv4 : r.private_ipv4);
        n.private_address = r.private_ipv4;
        n.port = r.port;
        n.user = r.user.empty() ? "ubuntu" : r.user;
        n.key = key;
        if (!r.jump.empty()) {
            n.jump = r.jump;
            n.jump_key = key;
        }
        ctx.state.nodes.push_back(n);
        ctx.progress.node(want, r.name + ": " + n.user + "@" + n.address +
                                    (n.jump.empty() ? std::string() : " through " + n.jump));
    }
    td["expires_at"] = slices_earliest_expiry(mine);
    td["resources"] = nlohmann::json::array();
    for (const auto& r : mine)
        td["resources"].push_back(r.name);
    return {};
}

Status slices_destroy(Context& ctx) {
    const auto& td = ctx.state.target_data;
    if (!td.value("resources_requested", false)) {
        ctx.progress.note("    no SLICES resources were requested; nothing to remove");
        return {};
    }
    const std::string cli = td.value("slices_cli", std::string("slices"));
    const std::string site = td.value("site", std::string());
    const std::string experiment = td.value("experiment", std::string());
    auto all = slices_list(ctx.proc, cli, site, experiment);
    if (!all) {
        const std::string why = to_lower(all.error().message);
        if (why.find("not found") == std::string::npos && why.find("expired") == std::string::npos)
            return all.error();
        ctx.progress.note("    SLICES: experiment " + experiment + " is gone (" + all.error().message +
                          "); its resources went with it");
        return {};
    }
    std::vector<std::string> names;
    for (const auto& r : *all)
        if (slices_node_of(ctx.state.cluster, r.name)) names.push_back(r.name);
    if (names.empty()) {
        ctx.progress.note("    SLICES: experiment " + experiment + " holds none of this cluster's resources");
        return {};
    }
    return slices_remove(ctx, cli, site, experiment, names);
}

Status slices_renew(Context& ctx, std::chrono::hours hours) {
    auto& td = ctx.state.target_data;
    const std::string cli = td.value("slices_cli", std::string("slices"));
    const std::string site = td.value("site", std::string());
    const std::string experiment = td.value("experiment", std::string());
    if (hours.count() * 3600 > k_slices_max_duration_s)
        return Error{"--hours " + std::to_string(hours.count()) +
                     " is longer than SLICES Basic Infrastructure extends a resource (89 days, 2136 hours)"};
    std::vector<SlicesResource> mine;
    auto all = slices_list(ctx.proc, cli, site, experiment);
    if (!all) return all.error();
    for (const auto& r : *all)
        if (slices_node_of(ctx.state.cluster, r.name)) {
            if (auto x = slices_call(ctx.proc, slices_bi_extend_argv(cli, site, experiment, r.name,
                                                                     slices_duration_hours(hours.count())));
                !x)
                return Error{"SLICES did not extend " + r.name + ": " + x.error().message};
        }
    auto after = slices_list(ctx.proc, cli, site, experiment);
    if (!after) return after.error();
    for (const auto& r : *after)
        if (slices_node_of(ctx.state.cluster, r.name)) mine.push_back(r);
    td["expires_at"] = slices_earliest_expiry(mine);
    ctx.progress.note("    SLICES: " + std::to_string(mine.size()) + " resources now end at " +
                      td["expires_at"].get<std::string>());
    return ctx.save();
}

std::optional<std::chrono::system_clock::time_point> slices_lease_end(const nlohmann::json& target_data) {
    auto t = utc_parse(target_data.value("expires_at", std::string()));
    if (!t) return std::nullopt;
    return std::chrono::system_clock::from_time_t(*t);
}

} // namespace ddl
