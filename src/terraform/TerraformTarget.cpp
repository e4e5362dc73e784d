#include "terraform/TerraformTarget.hpp"

#include "core/Log.hpp"
#include "provision/Configure.hpp"
#include "remote/SshKeys.hpp"
#include "render/Expiry.hpp"
#include "terraform/ScratchPlan.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>

namespace ddl {
namespace {

std::string verb(const std::string& action, bool done) {
    if (action == "create") return done ? "created" : "creating";
    if (action == "delete") return done ? "destroyed" : "destroying";
    if (action == "update") return done ? "modified" : "modifying";
    if (action == "replace") return done ? "replaced" : "replacing";
    if (action == "read") return done ? "read" : "reading";
    return done ? action + " done" : action;
}

std::string seconds(double s) {
    return std::to_string(static_cast<long long>(s)) + " s";
}

// Per-resource progress lines from the UI stream.
std::function<void(const TerraformEvent&)> progress_sink(Progress& progress) {
    return [&progress](const TerraformEvent& e) {
        using K = TerraformEvent::Kind;
        switch (e.kind) {
        case K::apply_start:
            progress.node(e.resource, verb(e.action, false) + "...");
            break;
        case K::apply_progress:
            progress.node(e.resource, "still " + verb(e.action, false) + " (" + seconds(e.elapsed_s) + ")");
            break;
        case K::apply_complete:
            progress.node(e.resource, verb(e.action, true) + " (" + seconds(e.elapsed_s) + ")");
            break;
        case K::apply_errored:
            progress.node(e.resource, verb(e.action, false) + " failed (" + seconds(e.elapsed_s) + ")");
            break;
        case K::diagnostic:
            if (e.severity == "warning") progress.note("terraform warning: " + e.summary);
            break;
        default:
            break;
        }
    };
}

} // namespace

TerraformTarget::TerraformTarget(std::string target, const std::map<std::string, std::string>& module)
    : m_target(std::move(target)), m_module(module), m_module_dir(m_target + "/terraform") {}

std::string TerraformTarget::spec_tool(const Spec& spec) {
    const TargetSection* section = spec.section.get();
    return section != nullptr ? section->to_json().value("terraform", "") : "";
}

std::string TerraformTarget::tool_choice(const Context& ctx) const {
    if (!ctx.options.terraform_bin.empty()) return ctx.options.terraform_bin;
    return spec_tool(ctx.spec);
}

Result<RenderInputs> TerraformTarget::render_inputs(Context& ctx) {
    RenderInputs in;
    std::error_code ec;
    in.state_dir = std::filesystem::absolute(ctx.cluster_dir(), ec).lexically_normal().string();
    in.expires = expiry_stamp(ctx.spec, ctx.state.created_at, static_cast<long long>(std::time(nullptr)));
    if (!ctx.spec.access.private_key.empty()) {
        std::string pub = ctx.spec.access.private_key + ".pub";
        auto text = read_file(pub);
        if (!text)
            return Error{"access.private_key: no public key next to it (" + pub +
                         "); write it with: ssh-keygen -y -f " + ctx.spec.access.private_key + " > " + pub};
        in.public_key = trim(*text);
        return in;
    }
    // ed25519: a key type every cloud's key import takes (EC2 imports only it and RSA).
    auto key = ensure_keypair(ctx.key_path(), "ddl-" + ctx.spec.name);
    if (!key) return key.error();
    in.public_key = trim(*key);
    return in;
}

Result<TerraformRunner> TerraformTarget::make_runner(const Context& ctx, const std::string& choice) const {
    auto tool = TerraformRunner::find_tool(ctx.proc, choice, m_target + ".terraform");
    if (!tool) return tool.error();
    auto env = terraform_env(ctx.spec);
    if (!env) return env.error();
    TerraformRunnerOptions opts;
    opts.work_dir = work_dir(ctx);
    opts.env = std::move(*env);
    return TerraformRunner(ctx.proc, *tool, opts, progress_sink(ctx.progress));
}

// The state stays where the module's backend puts it: local, in the working directory, unless the module's
// inputs name another backend.
Result<RenderedFiles> TerraformTarget::render(const Spec& s, const RenderInputs& in) const {
    RenderedFiles f;
    const std::string dir = m_module_dir + "/";
    for (const auto& [name, text] : m_module)
        f[dir + name] = text;
    for (auto& [name, text] : module_inputs(s, in))
        f[dir + name] = std::move(text);
    return f;
}

Status TerraformTarget::preflight(const Context& ctx) {
    auto tool = TerraformRunner::find_tool(ctx.proc, tool_choice(ctx), m_target + ".terraform");
    if (!tool) return tool.error();
    ctx.progress.note("using " + tool->name + " " + tool->version + " (" + tool->path + ")");
    return preflight_target(ctx, *tool);
}

std::chrono::milliseconds TerraformTarget::api_timeout(const std::string& seconds) {
    auto v = parse_int(seconds);
    if (v && *v > 0 && *v < 3600) return std::chrono::seconds(*v);
    return std::chrono::seconds(30);
}

Status TerraformTarget::report_checks(const Context& ctx, const std::vector<std::string>& problems,
                                      const std::vector<std::string>& notes) {
    for (const auto& n : notes)
        log::debug("pre-flight: " + n);
    if (!problems.empty())
        return Error{"pre-flight found " + std::to_string(problems.size()) +
                     " problem(s); nothing was created:\n      " + join(problems, "\n      ")};
    ctx.progress.note("pre-flight: " + join(notes, "; "));
    return {};
}

Status TerraformTarget::copy_rendered_module(const Context& ctx) const {
    namespace fs = std::filesystem;
    const std::string from = ctx.cluster_dir() + "/rendered/" + m_module_dir;
    const std::string to = work_dir(ctx);
    if (!path_exists(from)) return Error{from + " is missing; run the render phase first"};
    if (auto s = make_dirs(to, 0700); !s) return s;
    std::error_code ec;
    // Module files that a newer ddl no longer renders must not linger in the working directory.
    for (const auto& e : fs::directory_iterator(to, ec)) {
        auto name = e.path().filename().string();
        if (e.is_regular_file() &&
            (ends_with(name, ".tf") || ends_with(name, ".tf.json") || name == "terraform.tfvars.json") &&
            !path_exists(from + "/" + name))
            fs::remove(e.path(), ec);
    }
    for (const auto& e : fs::directory_iterator(from, ec)) {
        if (!e.is_regular_file()) continue;
        auto text = read_file(e.path().string());
        if (!text) return text.error();
        if (auto s = write_file_atomic(to + "/" + e.path().filename().string(), *text, 0600); !s) return s;
    }
    if (ec) return Error{"cannot copy " + from + " to " + to + ": " + ec.message()};
    return {};
}

Result<std::vector<NodeState>> TerraformTarget::nodes_from_outputs(const nlohmann::json& out,
                                                                   const std::string& private_key,
                                                                   const std::string& target) {
    auto text = [&](const char* key) -> Result<std::string> {
        if (!out.contains(key) || !out[key].is_string() || out[key].get<std::string>().empty())
            return Error{"terraform output has no " + std::string(key) +
                         "; is the working directory's module ddl's " + target + " module?"};
        return out[key].get<std::string>();
    };
    auto pub = text("master_public_ip");
    if (!pub) return pub.error();
    auto user = text("ssh_user");
    if (!user) return user.error();
    auto priv = text("master_private_ip");
    if (!priv) return priv.error();
    if (!out.contains("worker_private_ips") || !out["worker_private_ips"].is_array())
        return Error{"terraform output has no worker_private_ips list"};
    std::vector<NodeState> nodes;
    NodeState master;
    master.name = "master";
    master.group = "master";
    master.address = *pub;
    // The public address is for ddl; the nodes talk to each other (hostfile, rendezvous) on the private one.
    master.private_address = *priv;
    master.user = *user;
    master.key = private_key;
    nodes.push_back(master);
    int i = 0;
    for (const auto& ip : out["worker_private_ips"]) {
        ++i;
        if (!ip.is_string() || ip.get<std::string>().empty())
            return Error{"terraform output worker_private_ips[" + std::to_string(i - 1) +
                         "] is not an address"};
        NodeState w;
        w.name = "worker" + std::to_string(i);
        w.group = "workers";
        w.address = ip.get<std::string>();
        w.private_address = w.address;
        w.user = *user;
        w.key = private_key;
        // Only the master takes SSH from outside: every connection to a worker goes through it.
        w.jump = "master";
        nodes.push_back(w);
    }
    return nodes;
}

Status TerraformTarget::provision(Context& ctx) {
    if (auto s = copy_rendered_module(ctx); !s) return s;
    auto runner = make_runner(ctx, tool_choice(ctx));
    if (!runner) return runner.error();
    ctx.state.target_data["terraform"] = {
        {"tool", runner->tool().name}, {"path", runner->tool().path}, {"version", runner->tool().version}};
    if (auto s = ctx.save(); !s) return s;
    ctx.progress.note(runner->tool().name + " init");
    if (auto s = runner->init(); !s) return s;
    if (ctx.stop_requested()) return Error{"interrupted before terraform plan"};
    const auto replace = ctx.state.target_data.value("replace", std::vector<std::string>{});
    auto plan = runner->plan(TerraformRunner::PlanFile::write, replace);
    if (!plan) return plan.error();
    ctx.progress.note("plan: " + std::to_string(plan->add) + " to add, " + std::to_string(plan->change) +
                      " to change, " + std::to_string(plan->remove) + " to destroy");
    // A re-deploy that would delete or replace what exists waits for approval (a prompt, or -y).
    if (auto s = ctx.approve_destructive(runner->tool().name + " plan for cluster " + ctx.state.cluster,
                                         runner->changes_to_existing());
        !s)
        return s;
    // The saved plan carries the replacement from here: the record goes before apply, so that a failed or
    // interrupted apply is never followed by a second replacement (the next plan creates what is missing);
    // the old machines' keys go with them.
    if (!replace.empty()) {
        if (auto s = forget_replaced(ctx, replace, ctx.state.nodes); !s) return s;
        ctx.state.target_data.erase("replace");
        if (auto s = ctx.save(); !s) return s;
    }
    // Terraform is the safe point: an interrupt after the plan would leave half-created machines that
    // only apply itself knows, so it runs to its end and the next deploy or destroy converges.
    if (auto s = runner->apply(); !s) return s;
    auto outputs = runner->outputs();
    if (!outputs) return outputs.error();
    auto nodes = nodes_from_outputs(*outputs, ctx.spec.access.private_key, m_target);
    if (!nodes) return nodes.error();
    if (auto s = forget_replaced(ctx, replace, *nodes); !s) return s;
    ctx.state.nodes = std::move(*nodes);
    if (auto s = keep_node_credential(ctx, *outputs); !s) return s;
    // The credential's secret stays out of ddl's state: node-credential.json (0600) holds what the master
    // needs.
    outputs->erase(k_node_credential_output);
    ctx.state.target_data["outputs"] = *outputs;
    for (const auto& n : ctx.state.nodes)
        ctx.progress.node(n.name, n.address + (n.jump.empty() ? "" : " (through " + n.jump + ")"));
    return {};
}

std::string TerraformTarget::instance_address(const std::string& node) const {
    if (node == "master") return std::string(instance_resource_type()) + ".master";
    if (!starts_with(node, "worker")) return {};
    auto i = parse_int(node.substr(6));
    if (!i || *i < 1 || std::to_string(*i) != node.substr(6)) return {};
    return std::string(instance_resource_type()) + ".worker[" + std::to_string(*i - 1) + "]";
}

Status TerraformTarget::remove_for_replace(Context& ctx, const std::string& node) {
    const std::string address = instance_address(node);
    if (!ctx.state.node(node) || address.empty())
        return Error{"no node \"" + node + "\" in cluster " + ctx.state.cluster};
    ctx.progress.note("replacing node " + node + ": " + address + " is planned with -replace");
    auto pending = ctx.state.target_data.value("replace", std::vector<std::string>{});
    if (std::find(pending.begin(), pending.end(), address) == pending.end()) pending.push_back(address);
    ctx.state.target_data["replace"] = pending;
    return {};
}

Status TerraformTarget::forget_replaced(const Context& ctx, const std::vector<std::string>& replaced,
                                        const std::vector<NodeState>& nodes) const {
    for (const auto& n : nodes) {
        if (std::find(replaced.begin(), replaced.end(), instance_address(n.name)) == replaced.end()) continue;
        for (const auto& host : {n.address, n.private_address})
            if (!host.empty())
                if (auto s = forget_host_key(ctx.known_hosts_path(), host, n.port); !s) return s;
    }
    return {};
}

Status TerraformTarget::keep_node_credential(Context& ctx, const nlohmann::json& outputs) {
    const std::string path = ctx.node_credential_path();
    auto cred = ctx.spec.life.autostop.node_credential ? node_credential(ctx, outputs)
                                                       : Result<std::optional<nlohmann::json>>{std::nullopt};
    if (!cred) return cred.error();
    if (!*cred) {
        std::error_code ec;
        std::filesystem::remove(path, ec);
        return {};
    }
    register_node_credential_secrets(**cred);
    return write_file_atomic(path, (**cred).dump(2) + "\n", 0600);
}

Status TerraformTarget::set_power(Context& ctx, bool on) {
    auto inputs = render_inputs(ctx);
    if (!inputs) return inputs.error();
    auto files = render(ctx.spec, *inputs);
    if (!files) return files.error();
    if (auto s = write_rendered(*files, ctx.cluster_dir() + "/rendered"); !s) return s;
    if (auto s = make_dirs(work_dir(ctx), 0700); !s) return s;
    if (auto s = write_file_atomic(work_dir(ctx) + "/" + k_power_file,
                                   json_file(nlohmann::json{{"stopped", !on}}), 0600);
        !s)
        return s;
    // The command asked first (its plan, or -y): Terraform's in-place updates of the instances are approved.
    // A replacement left pending by an interrupted `deploy --replace` is deploy's, not a stop's or a start's.
    const bool yes = ctx.options.yes;
    ctx.options.yes = true;
    const auto pending = ctx.state.target_data.find("replace");
    const auto kept = pending != ctx.state.target_data.end() ? *pending : nlohmann::json();
    ctx.state.target_data.erase("replace");
    auto s = provision(ctx);
    if (!kept.is_null()) ctx.state.target_data["replace"] = kept;
    ctx.options.yes = yes;
    return s;
}

Status TerraformTarget::destroy(Context& ctx) {
    const std::string dir = work_dir(ctx);
    // Nothing was ever applied if Terraform never initialised its working directory.
    if (!path_exists(dir + "/.terraform") && !path_exists(dir + "/terraform.tfstate")) {
        ctx.progress.note("no Terraform working directory with state: nothing was created");
        return {};
    }
    // The tool that deployed the cluster, unless --terraform-bin names another.
    std::string choice = ctx.options.terraform_bin;
    if (choice.empty() && ctx.state.target_data.contains("terraform"))
        choice = ctx.state.target_data["terraform"].value("path", "");
    if (choice.empty()) choice = spec_tool(ctx.spec);
    auto runner = make_runner(ctx, choice);
    if (!runner) return runner.error();
    if (!path_exists(dir + "/.terraform")) {
        if (auto s = runner->init(); !s) return s;
    }
    // One destroy per call: run_destroy already retries the whole driver, with a state listing after
    // each try that names whatever is left.
    auto s = runner->destroy_all(1);
    if (!s) return s;
    ctx.state.nodes.clear();
    return {};
}

Status TerraformTarget::plan(const PlanRequest& req, DeployPlan& out) {
    auto runner = make_runner(req.ctx, tool_choice(req.ctx));
    if (!runner) return runner.error();
    return add_terraform_plan(req, *this, *runner, m_module_dir, out);
}

} // namespace ddl
