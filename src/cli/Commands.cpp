#include "cli/Commands.hpp"

#include "cli/ClusterRef.hpp"
#include "cli/Internal.hpp"
#include "cli/StarterSpecs.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "provision/HostfileWriter.hpp"
#include "provision/Pipeline.hpp"
#include "provision/SshRankTransport.hpp"
#include "remote/SshKeys.hpp"
#include "render/Renderer.hpp"
#include "runtime/Hostfile.hpp"
#include "runtime/Launcher.hpp"
#include "spec/SpecLoader.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <signal.h>
#include <unistd.h>

namespace ddl::cli {
std::atomic<bool> g_interrupted{false};

Result<std::string> random_hex(std::size_t bytes) {
    std::string data;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno_error("cannot open /dev/urandom");
    data.resize(bytes);
    ssize_t n = read(fd, data.data(), bytes);
    close(fd);
    if (n != static_cast<ssize_t>(bytes)) return Error{"cannot read /dev/urandom"};
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (char ch : data) {
        auto c = static_cast<unsigned char>(ch);
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

namespace {

void on_signal(int) {
    g_interrupted = true;
}

} // namespace

// SIGINT/SIGTERM stop long commands at the next safe point instead of killing them mid-write.
void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
}

namespace {

void print_diagnostics(const GlobalOptions& g, const Diagnostics& d) {
    if (g.json)
        std::cout << nlohmann::json{{"valid", !d.has_errors()}, {"diagnostics", d.to_json()}}.dump(2) << "\n";
    else
        std::cerr << d.format_text();
}

} // namespace

Result<std::unique_ptr<OpenCluster>> open_cluster(const GlobalOptions& g, const std::string& ref, bool mutate,
                                                  const std::string& what, int* rc) {
    auto oc = std::make_unique<OpenCluster>(OpenCluster{StateStore(g.state_dir), {}, {}, {}, {}, {}, {}, {}});
    if (rc) *rc = exit_code::k_bad_input;
    auto name = resolve_cluster(oc->store, ref);
    if (!name) return name.error();
    if (!oc->store.exists(*name)) return Error{"no cluster \"" + *name + "\" in " + g.state_dir};
    if (rc) *rc = exit_code::k_failure;
    if (mutate) {
        auto lock = ClusterLock::acquire(oc->store.cluster_dir(*name), what);
        if (!lock) return lock.error();
        oc->lock = std::move(*lock);
    }
    auto st = oc->store.load(*name);
    if (!st) return st.error();
    oc->state = std::move(*st);
    log::register_secret(oc->state.jupyter_token);
    auto loaded = load_spec_string(oc->state.spec_text, oc->state.cluster + " (stored spec)", false);
    if (!loaded.spec)
        return Error{"the stored spec no longer validates:\n" + loaded.diagnostics.format_text()};
    auto driver = make_target_driver(loaded.spec->target);
    if (!driver) return driver.error();
    oc->driver = std::move(*driver);
    oc->ctx.emplace(
        Context{*loaded.spec, oc->state, oc->store, oc->proc, oc->remote, oc->progress, {}, &g_interrupted});
    log::add_file(oc->store.cluster_dir(*name) + "/logs/ddl.log");
    return oc;
}

std::vector<std::string> manifest_target_list() {
    std::vector<std::string> out;
    for (const auto& e : target_registry())
        if (e.driver()->takes_manifest()) out.push_back(e.kind.name());
    return out;
}

std::set<std::string> manifest_targets() {
    auto list = manifest_target_list();
    return {list.begin(), list.end()};
}

Status training_containers_ready(const Context& ctx) {
    if (ctx.spec.runtime.image.empty())
        return Error{"cluster " + ctx.state.cluster +
                     " has no training container; set runtime.image in its spec and run `ddl deploy`"};
    if (!ctx.state.phase_done("configure"))
        return Error{"cluster " + ctx.state.cluster +
                     " is not configured yet (its training containers start then); run `ddl deploy` first"};
    return {};
}

Result<PreparedLaunch> prepare_launch(Context& ctx, const RunArgs& a) {
    auto driver = make_target_driver(ctx.spec.target);
    if (!driver) return driver.error();
    if (auto why = (*driver)->why_no_ssh("launching ranks over SSH")) return Error{*why};
    if (!ctx.state.phase_done("probe"))
        return Error{"cluster " + ctx.state.cluster + " is not deployed yet; run `ddl deploy` first"};
    std::vector<runtime::HostfileEntry> hosts;
    if (!a.hostfile.empty()) {
        auto parsed = runtime::read_hostfile(a.hostfile);
        if (!parsed) return parsed.error();
        hosts = std::move(*parsed);
    } else {
        for (const auto& n : ctx.state.nodes) {
            if (n.slots <= 0) continue; // hosts services only
            runtime::HostfileEntry e;
            e.host = n.cluster_address();
            e.slots = n.slots;
            hosts.push_back(e);
        }
    }
    if (a.max_nodes > 0 && static_cast<std::size_t>(a.max_nodes) < hosts.size())
        hosts.resize(static_cast<std::size_t>(a.max_nodes));
    auto find_node = [&ctx](const std::string& host) -> const NodeState* {
        for (const auto& n : ctx.state.nodes)
            if (n.address == host || n.cluster_address() == host || n.name == host || n.hostname == host)
                return &n;
        return nullptr;
    };
    for (const auto& h : hosts) {
        if (!find_node(h.host))
            return Error{a.hostfile + ":" + std::to_string(h.line) + ": host " + h.host +
                         " is not a node of cluster " + ctx.state.cluster};
    }
    if (a.container) {
        if (auto s = training_containers_ready(ctx); !s) return s.error();
    }
    PreparedLaunch p;
    p.transport = std::make_unique<SshRankTransport>(
        [&ctx, find_node](const std::string& host) -> std::optional<SshEndpoint> {
            const NodeState* n = find_node(host);
            if (!n) return std::nullopt;
            return ctx.endpoint(*n);
        });
    // Host networking: a container's rank has its node's addresses, so the rendezvous address and the
    // interface choice are the same as for ranks on the node itself.
    if (a.container)
        p.transport->use_containers({.engine = ctx.spec.container_engine_argv(),
                                     .container = [&ctx, find_node](const std::string& host) {
                                         const NodeState* n = find_node(host);
                                         return ctx.spec.training_container(n ? n->name : host);
                                     }});
    auto& opts = p.opts;
    opts.hosts = hosts;
    opts.np = a.np;
    opts.argv = a.command;
    opts.iface = a.iface.empty() ? ctx.spec.runtime.interface : a.iface;
    opts.master_port = a.port > 0 ? a.port : ctx.spec.runtime.master_port;
    opts.startup_timeout = std::chrono::seconds(a.startup_timeout_s);
    if (ctx.spec.runtime.backend != Backend::auto_select)
        opts.extra_env["DDL_BACKEND"] = to_string(ctx.spec.runtime.backend);
    for (const auto& kv : a.env) {
        auto eq = kv.find('=');
        std::string name = kv.substr(0, eq);
        if (name.empty() ||
            name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                std::string::npos)
            return Error{"-x " + kv + ": not a variable name (use -x NAME=VALUE or -x NAME)"};
        const char* here = std::getenv(name.c_str());
        opts.extra_env[name] = eq != std::string::npos ? kv.substr(eq + 1) : (here ? here : "");
    }
    return p;
}

Result<nlohmann::json> run_tool_json(Context& ctx, const RunArgs& a) {
    auto prepared = prepare_launch(ctx, a);
    if (!prepared) return prepared.error();
    std::string result_line;
    std::vector<std::string> errors;
    prepared->opts.output = [&](const std::string& line, runtime::OutputStream stream) {
        if (starts_with(line, "[0] {"))
            result_line = line.substr(4);
        else if (stream == runtime::OutputStream::err)
            errors.push_back(line);
    };
    prepared->opts.forward_signals = a.forward_signals;
    runtime::Launcher launcher(*prepared->transport);
    auto result = launcher.run(prepared->opts);
    if (!result) return result.error();
    if (result->exit_code != 0 || result_line.empty())
        return Error{(result->message.empty() ? "no result from rank 0" : result->message) +
                     (errors.empty() ? "" : "\n" + join(errors, "\n"))};
    auto j = nlohmann::json::parse(result_line, nullptr, false);
    if (j.is_discarded()) return Error{"unreadable result: " + result_line};
    return j;
}

namespace {

// On a batch scheduler's cluster (slurm) the ranks are a step of its job: ddl becomes the step's
// launcher (srun), which streams the ranks' output, forwards signals and stops every rank when one fails.
int run_job_step(Context& ctx, const TargetDriver& driver, const RunArgs& a) {
    if (!a.hostfile.empty() || a.max_nodes > 0 || !a.iface.empty() || a.port > 0) {
        std::cerr << "ddl run: on a " << ctx.spec.target
                  << " cluster the job's allocation decides the hosts; only -np and -x apply\n";
        return exit_code::k_bad_input;
    }
    std::map<std::string, std::string> extra;
    for (const auto& kv : a.env) {
        auto eq = kv.find('=');
        const char* here = std::getenv(kv.substr(0, eq).c_str());
        extra[kv.substr(0, eq)] = eq != std::string::npos ? kv.substr(eq + 1) : (here ? here : "");
    }
    auto cmd = driver.job_step_command(ctx, a.np, a.command, extra);
    if (!cmd) {
        std::cerr << "ddl run: " << cmd.error().message << "\n";
        return exit_code::k_bad_input;
    }
    log::info("running " + printable_argv(*cmd));
    for (const auto& name : cmd->env_unset)
        unsetenv(name.c_str());
    for (const auto& [name, value] : cmd->env_set)
        setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (auto& arg : cmd->argv)
        argv.push_back(arg.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << "ddl run: cannot start srun: " << std::strerror(errno) << "\n";
    return exit_code::k_failure;
}

} // namespace

int cmd_run(const GlobalOptions& g, const RunArgs& a) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, a.cluster, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl run: " << oc.error().message << "\n";
        return open_rc;
    }
    if ((*oc)->driver->runs_job_steps()) return run_job_step(*(*oc)->ctx, *(*oc)->driver, a);
    auto prepared = prepare_launch(*(*oc)->ctx, a);
    if (!prepared) {
        std::cerr << "ddl run: " << prepared.error().message << "\n";
        return exit_code::k_bad_input;
    }
    runtime::Launcher launcher(*prepared->transport);
    auto result = launcher.run(prepared->opts);
    if (!result) {
        std::cerr << "ddl run: " << result.error().message << "\n";
        return exit_code::k_bad_input;
    }
    if (result->exit_code != 0) {
        std::cerr << "ddl run: " << result->message << "\n";
        return exit_code::k_failure;
    }
    return exit_code::k_ok;
}

Result<std::uint64_t> parse_size(const std::string& text) {
    static const std::vector<std::pair<std::string, std::uint64_t>> units{{"GiB", 1ULL << 30},
                                                                          {"MiB", 1ULL << 20},
                                                                          {"KiB", 1ULL << 10},
                                                                          {"G", 1ULL << 30},
                                                                          {"M", 1ULL << 20},
                                                                          {"K", 1ULL << 10},
                                                                          {"B", 1}};
    for (const auto& [suffix, factor] : units) {
        if (!ends_with(text, suffix)) continue;
        auto n = parse_int(text.substr(0, text.size() - suffix.size()));
        if (!n || *n <= 0) break;
        return static_cast<std::uint64_t>(*n) * factor;
    }
    if (auto n = parse_int(text); n && *n > 0) return static_cast<std::uint64_t>(*n);
    return Error{"\"" + text + "\" is not a size (e.g. 4B, 64KiB, 256MiB)"};
}

int cmd_bench_allreduce(const GlobalOptions& g, const BenchArgs& b) {
    auto fail = [](const std::string& m, int rc) {
        std::cerr << "ddl bench allreduce: " << m << "\n";
        return rc;
    };
    auto colon = b.sizes.find(':');
    auto lo = parse_size(b.sizes.substr(0, colon));
    auto hi = parse_size(colon == std::string::npos ? b.sizes : b.sizes.substr(colon + 1));
    if (!lo || !hi || *lo > *hi)
        return fail("--sizes " + b.sizes + ": give MIN:MAX, e.g. 4B:256MiB", exit_code::k_bad_input);
    if (b.iters < 1 || b.warmup < 0)
        return fail("--iters must be >= 1 and --warmup >= 0", exit_code::k_bad_input);
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, b.run.cluster, false, "", &open_rc);
    if (!oc) return fail(oc.error().message, open_rc);
    auto& ctx = *(*oc)->ctx;
    RunArgs a = b.run;
    a.command = {"ddl-allreduce-test",
                 "-b",
                 std::to_string(*lo),
                 "-e",
                 std::to_string(*hi),
                 "-f",
                 "2",
                 "-n",
                 std::to_string(b.iters),
                 "-w",
                 std::to_string(b.warmup),
                 "--json"};
    auto ran = run_tool_json(ctx, a);
    if (!ran) return fail(ran.error().message, exit_code::k_failure);
    const auto& j = *ran;
    // The bound: ring allreduce of S bytes over N ranks on links of B bit/s takes >= 2(N-1)/N * S/B,
    // so busbw can reach at most B/8 bytes/s.
    std::uint64_t link_bps =
        b.link_gbit > 0 ? static_cast<std::uint64_t>(b.link_gbit * 1e9) : ctx.spec.link_rate_bps();
    double limit_gbs = static_cast<double>(link_bps) / 8e9;
    int n = j.value("ranks", 0);
    nlohmann::json out{{"cluster", ctx.state.cluster},
                       {"ranks", n},
                       {"backend", j.value("backend", "")},
                       {"link_gbit", static_cast<double>(link_bps) / 1e9},
                       {"results", nlohmann::json::array()}};
    for (const auto& r : j["results"]) {
        double size = r.value("size", 0.0), busbw = r.value("busbw", 0.0);
        nlohmann::json row = r;
        if (limit_gbs > 0 && n > 1) {
            row["limit_time_us"] = 2.0 * (n - 1) / n * size / (static_cast<double>(link_bps) / 8.0) * 1e6;
            row["limit_busbw"] = limit_gbs;
            row["of_limit"] = busbw / limit_gbs;
        }
        out["results"].push_back(row);
    }
    out["wrong"] = j.value("wrong", 0);
    if (b.format == "json") {
        std::cout << out.dump(2) << "\n";
    } else if (b.format == "csv") {
        std::cout << "size_bytes,time_us,algbw_gbs,busbw_gbs,limit_time_us,limit_busbw_gbs,of_limit,wrong\n";
        for (const auto& r : out["results"])
            std::cout << r.value("size", 0) << "," << r.value("time_us", 0.0) << "," << r.value("algbw", 0.0)
                      << "," << r.value("busbw", 0.0) << "," << r.value("limit_time_us", 0.0) << ","
                      << r.value("limit_busbw", 0.0) << "," << r.value("of_limit", 0.0) << ","
                      << r.value("wrong", 0) << "\n";
    } else {
        std::printf("# allreduce on cluster %s: %d ranks, backend %s, float32 sum; GB/s = 1e9 B/s\n",
                    ctx.state.cluster.c_str(), n, out["backend"].get<std::string>().c_str());
        if (limit_gbs > 0)
            std::printf("# limit: links of %s -> ring time >= 2(N-1)/N * S/B, busbw <= %.4f GB/s\n",
                        format_rate(link_bps).c_str(), limit_gbs);
        else
            std::printf("# limit: link bandwidth unknown (pass --link-gbit to compare)\n");
        std::printf("%14s %12s %12s %12s %14s %9s %7s\n", "size(B)", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
                    "limit_time(us)", "of_limit", "wrong");
        for (const auto& r : out["results"]) {
            std::printf("%14lld %12.1f %12.4f %12.4f", r.value("size", 0LL), r.value("time_us", 0.0),
                        r.value("algbw", 0.0), r.value("busbw", 0.0));
            if (r.contains("limit_time_us"))
                std::printf(" %14.1f %8.1f%%", r.value("limit_time_us", 0.0),
                            100.0 * r.value("of_limit", 0.0));
            else
                std::printf(" %14s %9s", "-", "-");
            std::printf(" %7lld\n", r.value("wrong", 0LL));
        }
    }
    return out["wrong"].get<long long>() == 0 ? exit_code::k_ok : exit_code::k_failure;
}

int cmd_init(const GlobalOptions&, const std::string& target, const std::string& out, const std::string& name,
             bool force) {
    if (!is_dns_label(name)) {
        std::cerr << "ddl init: --name must be DNS-safe (got \"" << name
                  << "\")\nhint: lowercase letters, digits, '-'\n";
        return exit_code::k_bad_input;
    }
    auto text = starter_spec(target, name);
    if (!text) {
        std::cerr << "ddl init: " << text.error().message << "\n";
        return exit_code::k_bad_input;
    }
    if (out == "-") {
        std::cout << *text;
        return exit_code::k_ok;
    }
    if (path_exists(out) && !force) {
        std::cerr << "ddl init: " << out
                  << " exists already\nhint: pass --force to overwrite it, or -o OTHER.yaml\n";
        return exit_code::k_bad_input;
    }
    if (auto s = write_file_atomic(out, *text, 0644); !s) {
        std::cerr << "ddl init: " << s.error().message << "\n";
        return exit_code::k_failure;
    }
    std::cout << "wrote " << out << " (target " << target << "); next: ddl validate " << out << "\n";
    return exit_code::k_ok;
}

int cmd_validate(const GlobalOptions& g, const std::string& file) {
    auto r = load_spec_file(file);
    print_diagnostics(g, r.diagnostics);
    if (!r.spec) return exit_code::k_bad_input;
    if (!g.json)
        std::cout << file << ": valid (cluster " << r.spec->name << ", target " << r.spec->target << ", "
                  << r.spec->node_count() << " node(s))\n";
    return exit_code::k_ok;
}

// The public key a render of the spec uses: the file given, else access.private_key's .pub, else the
// cluster's own key if it was deployed before; empty (a placeholder is rendered) when there is none.
Result<std::string> public_key_for_render(const GlobalOptions& g, const Spec& spec,
                                          const std::string& given) {
    if (!given.empty()) {
        auto text = read_file_limited(given, 64 * 1024);
        if (!text) return Error{"--public-key " + given + ": " + text.error().message};
        return parse_openssh_public_key(*text, "--public-key " + given);
    }
    for (const auto& candidate : {spec.access.private_key.empty() ? "" : spec.access.private_key + ".pub",
                                  StateStore(g.state_dir).cluster_dir(spec.name) + "/id_ed25519.pub"}) {
        if (candidate.empty() || !path_exists(candidate)) continue;
        if (auto text = read_file(candidate)) return trim(*text);
    }
    return std::string();
}

int cmd_render(const GlobalOptions& g, const std::string& file, const std::string& out_dir,
               const std::string& public_key_file) {
    auto r = load_spec_file(file);
    if (!r.spec) {
        print_diagnostics(g, r.diagnostics);
        return exit_code::k_bad_input;
    }
    RenderInputs inputs;
    auto driver = make_target_driver(r.spec->target);
    if (!driver) {
        std::cerr << "ddl render: " << driver.error().message << "\n";
        return exit_code::k_failure;
    }
    if ((*driver)->renders_public_key()) {
        auto key = public_key_for_render(g, *r.spec, public_key_file);
        if (!key) {
            std::cerr << "ddl render: " << key.error().message << "\n";
            return exit_code::k_bad_input;
        }
        inputs.public_key = *key;
        if (key->empty())
            std::cerr << "ddl render: note: no public key yet; terraform.tfvars.json has a placeholder that "
                         "`ddl deploy` replaces with the cluster's key (or pass --public-key FILE)\n";
    }
    auto files = render_spec(*r.spec, inputs);
    if (!files) {
        std::cerr << "ddl render: " << files.error().message << "\n";
        return exit_code::k_failure;
    }
    if (auto s = write_rendered(*files, out_dir); !s) {
        std::cerr << "ddl render: " << s.error().message << "\n";
        return exit_code::k_failure;
    }
    for (const auto& [rel, content] : *files)
        std::cout << out_dir << "/" << rel << "\n";
    return exit_code::k_ok;
}

Result<std::unique_ptr<OpenCluster>> open_for_deploy(const GlobalOptions& g, const Spec& spec,
                                                     const DeployArgs& a, const std::string& what, int& rc) {
    rc = exit_code::k_failure;
    auto oc = std::make_unique<OpenCluster>(OpenCluster{StateStore(g.state_dir), {}, {}, {}, {}, {}, {}, {}});
    auto& store = oc->store;
    auto driver = make_target_driver(spec.target);
    if (!driver) return driver.error();
    oc->driver = std::move(*driver);
    if (auto s = store.ensure_cluster_dir(spec.name); !s) return s.error();
    auto lock = ClusterLock::acquire(store.cluster_dir(spec.name), what);
    if (!lock) return Error{"cluster " + spec.name + ": " + lock.error().message};
    oc->lock = std::move(*lock);
    auto& state = oc->state;
    if (store.exists(spec.name)) {
        auto st = store.load(spec.name);
        if (!st) return st.error();
        state = std::move(*st);
        if (state.target != spec.target) {
            rc = exit_code::k_bad_input;
            return Error{"cluster " + spec.name + " exists on target " + state.target +
                         "\nhint: destroy it first (ddl destroy " + spec.name + ") or pick another name"};
        }
        if (state.destroying)
            return Error{"cluster " + spec.name + " is half destroyed\nhint: finish with `ddl destroy " +
                         spec.name + "`, then deploy again"};
        // A changed spec re-runs everything after validate; each phase converges to the new spec.
        if (state.spec != spec.to_json()) state.reset_phases_from(phase_names(), "render");
    } else {
        state.cluster = spec.name;
        state.target = spec.target;
    }
    state.spec = spec.to_json();
    if (spec.services.jupyter && state.jupyter_token.empty()) {
        auto token = random_hex(24);
        if (!token) return token.error();
        state.jupyter_token = *token;
    }
    log::register_secret(state.jupyter_token);
    auto text = read_file(a.file);
    state.spec_text = text ? *text : "";
    if (auto s = make_dirs(store.cluster_dir(spec.name) + "/logs", 0700); !s) return s.error();
    log::add_file(store.cluster_dir(spec.name) + "/logs/ddl.log");
    if (auto s = store.save(state); !s) return s.error();
    kill_point("deploy:opened");
    install_signal_handlers();
    DeployOptions opts;
    opts.yes = a.yes;
    opts.ssh_deadline = std::chrono::seconds(a.ssh_timeout_s);
    opts.manifest_path = a.manifest;
    opts.skip_preflight = a.skip_preflight;
    opts.terraform_bin = a.terraform_bin;
    opts.force_configure = a.force_configure;
    oc->ctx.emplace(Context{spec, state, store, oc->proc, oc->remote, oc->progress, opts, &g_interrupted});
    return oc;
}

int cmd_deploy(const GlobalOptions& g, const DeployArgs& a) {
    auto loaded = load_spec_file(a.file);
    if (!loaded.spec) {
        print_diagnostics(g, loaded.diagnostics);
        return exit_code::k_bad_input;
    }
    const Spec& spec = *loaded.spec;
    if (!a.manifest.empty() && !manifest_targets().count(spec.target)) {
        std::cerr << "ddl deploy: --manifest is for target " << join(manifest_target_list(), ", ")
                  << " (this spec's target is " << spec.target << ")\n";
        return exit_code::k_bad_input;
    }
    int rc = 0;
    auto oc = open_for_deploy(g, spec, a, "ddl deploy " + a.file, rc);
    if (!oc) {
        std::cerr << "ddl deploy: " << oc.error().message << "\n";
        return rc;
    }
    auto& ctx = *(*oc)->ctx;
    ctx.progress.note("deploying cluster " + spec.name + " (target " + spec.target + ", " +
                      std::to_string(spec.node_count()) + " node(s))");
    rc = run_deploy(ctx, *(*oc)->driver, DeployRequest{a.only});
    if (rc == exit_code::k_ok)
        ctx.progress.note("cluster " + spec.name + " is ready: `ddl status " + spec.name +
                          "`, `ddl hostfile --cluster " + spec.name + "`, `ddl destroy " + spec.name + "`");
    return rc;
}

int cmd_destroy(const GlobalOptions& g, const std::string& ref, bool, const std::string& terraform_bin) {
    install_signal_handlers();
    StateStore store(g.state_dir);
    auto name = resolve_cluster(store, ref);
    if (!name) {
        std::cerr << "ddl destroy: " << name.error().message << "\n";
        return exit_code::k_bad_input;
    }
    if (store.leftover(*name)) {
        auto lock = ClusterLock::acquire(store.cluster_dir(*name), "ddl destroy");
        if (!lock) {
            std::cerr << "ddl destroy: cluster " << *name << ": " << lock.error().message << "\n";
            return exit_code::k_failure;
        }
        if (store.leftover(*name)) {
            if (auto s = store.remove(*name); !s) {
                std::cerr << "ddl destroy: " << s.error().message << "\n";
                return exit_code::k_failure;
            }
            std::cout << "cluster " << *name << ": removed a state folder without state.json (left by an "
                      << "interrupted command; nothing had been created)\n";
            return exit_code::k_ok;
        }
    }
    if (!store.exists(*name)) {
        // Most likely a typo: say so and what exists, rather than succeed quietly (issue #19).
        auto all = store.clusters();
        std::cerr << "ddl destroy: no cluster named " << *name << " in " << store.root();
        if (auto near = closest_match(*name, all)) std::cerr << "; did you mean " << *near << "?";
        std::cerr << (all.empty() ? "\n  (there are no clusters there)\n"
                                  : "\n  clusters there: " + join(all, ", ") + " (`ddl list`)\n");
        return exit_code::k_bad_input;
    }
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, *name, true, "ddl destroy", &open_rc);
    if (!oc) {
        std::cerr << "ddl destroy: " << oc.error().message << "\n";
        return open_rc;
    }
    auto driver = make_target_driver((*oc)->ctx->spec.target);
    if (!driver) {
        std::cerr << "ddl destroy: " << driver.error().message << "\n";
        return exit_code::k_failure;
    }
    (*oc)->ctx->options.terraform_bin = terraform_bin;
    int rc = run_destroy(*(*oc)->ctx, **driver);
    if (rc == exit_code::k_ok) std::cout << "cluster " << *name << " destroyed\n";
    return rc;
}

// "90s", "30m", "24h", "7d" -> seconds.
std::optional<long long> parse_age(const std::string& text) {
    if (text.size() < 2) return std::nullopt;
    auto n = parse_int(text.substr(0, text.size() - 1));
    // Bounded so that scaling to seconds cannot overflow.
    if (!n || *n < 0 || *n > 100LL * 366 * 86400) return std::nullopt;
    switch (text.back()) {
    case 's':
        return *n;
    case 'm':
        return *n * 60;
    case 'h':
        return *n * 3600;
    case 'd':
        return *n * 86400;
    default:
        return std::nullopt;
    }
}

int cmd_gc(const GlobalOptions& g, const std::string& older_than, const std::string& prefix, bool dry_run) {
    auto age = parse_age(older_than);
    if (!age) {
        std::cerr << "ddl gc: --older-than " << older_than << ": give a number with s, m, h or d, e.g. 24h\n";
        return exit_code::k_bad_input;
    }
    StateStore store(g.state_dir);
    int failed = 0, removed = 0;
    auto report = nlohmann::json::array();
    // With --output json, stdout carries one JSON document: what each destroy prints goes to stderr.
    std::streambuf* saved_out = g.json ? std::cout.rdbuf(std::cerr.rdbuf()) : nullptr;
    auto now = std::filesystem::file_time_type::clock::now();
    for (const auto& name : store.clusters()) {
        if (!starts_with(name, prefix)) continue;
        std::error_code ec;
        // The state file is rewritten by every command that changes the cluster: its age is the
        // time since the cluster was last touched.
        auto mtime = std::filesystem::last_write_time(store.cluster_dir(name) + "/state.json", ec);
        if (ec) continue;
        auto idle = std::chrono::duration_cast<std::chrono::seconds>(now - mtime).count();
        if (idle < *age) continue;
        std::cout << (dry_run ? "would destroy " : "destroying ") << name << " (untouched for " << idle / 3600
                  << " h)\n";
        std::string outcome = "would destroy";
        if (!dry_run) {
            bool ok = cmd_destroy(g, name, true) == exit_code::k_ok;
            ++(ok ? removed : failed);
            outcome = ok ? "destroyed" : "failed";
        }
        report.push_back({{"cluster", name}, {"idle_s", idle}, {"outcome", outcome}});
    }
    std::cout << "gc: " << removed << " destroyed, " << failed << " failed\n";
    if (saved_out) {
        std::cout.rdbuf(saved_out);
        std::cout << nlohmann::json{{"clusters", report}, {"destroyed", removed}, {"failed", failed}}.dump(2)
                  << "\n";
    }
    return failed ? exit_code::k_partial : exit_code::k_ok;
}

int cmd_status(const GlobalOptions& g, const std::string& ref, bool show_secrets) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, ref, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl status: " << oc.error().message << "\n";
        return open_rc;
    }
    const auto& st = (*oc)->state;
    if (g.json) {
        auto j = st.to_json();
        j.erase("spec_text");
        // stdout ends up in CI logs: the token stays in the 0600 state unless asked for.
        if (!show_secrets) j.erase("jupyter_token");
        std::cout << j.dump(2) << "\n";
        return exit_code::k_ok;
    }
    std::printf("cluster %s (target %s)\nphases:", st.cluster.c_str(), st.target.c_str());
    for (const auto& p : phase_names())
        std::printf(" %s=%s", p.c_str(), st.phase_done(p) ? "done" : "pending");
    std::printf("\n%-10s %-8s %-40s %5s %5s %6s  %s\n", "NODE", "GROUP", "ADDRESS", "GPUS", "CPUS", "SLOTS",
                "OS");
    for (const auto& n : st.nodes)
        std::printf("%-10s %-8s %-40s %5d %5d %6d  %s\n", n.name.c_str(), n.group.c_str(),
                    (host_for_port(n.address) + ":" + std::to_string(n.port)).c_str(), n.gpus, n.cpus,
                    n.slots, n.os.c_str());
    return exit_code::k_ok;
}

int cmd_hostfile(const GlobalOptions& g, const std::string& ref, const std::string& format,
                 const std::string& out) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, ref, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl hostfile: " << oc.error().message << "\n";
        return open_rc;
    }
    const auto& st = (*oc)->state;
    if (!st.phase_done("probe")) {
        std::cerr << "ddl hostfile: cluster " << st.cluster
                  << " has not been probed yet\nhint: run `ddl deploy` first\n";
        return exit_code::k_failure;
    }
    HostfileFormat f = (*oc)->ctx->spec.hostfile_format;
    if (format == "openmpi") f = HostfileFormat::openmpi;
    if (format == "horovod") f = HostfileFormat::horovod;
    if (format == "mpich") f = HostfileFormat::mpich;
    std::string text = format_hostfile(st.nodes, f);
    if (out.empty() && g.json) {
        // The nodes with slots, as a program would want them; the text stays in "text".
        auto nodes = nlohmann::json::array();
        for (const auto& n : st.nodes) {
            if (n.slots > 0)
                nodes.push_back({{"name", n.name}, {"address", n.cluster_address()}, {"slots", n.slots}});
        }
        std::cout << nlohmann::json{{"cluster", st.cluster},
                                    {"format", to_string(f)},
                                    {"nodes", nodes},
                                    {"text", text}}
                         .dump(2)
                  << "\n";
        return exit_code::k_ok;
    }
    if (out.empty()) {
        std::cout << text;
        return exit_code::k_ok;
    }
    if (auto s = write_file_atomic(out, text, 0644); !s) {
        std::cerr << "ddl hostfile: " << s.error().message << "\n";
        return exit_code::k_failure;
    }
    return exit_code::k_ok;
}

int cmd_exec(const GlobalOptions& g, const std::string& ref, const std::vector<std::string>& only,
             const std::vector<std::string>& command, int timeout_s, bool container) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, ref, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl exec: " << oc.error().message << "\n";
        return open_rc;
    }
    auto& ctx = *(*oc)->ctx;
    if (auto why = (*oc)->driver->why_no_ssh("ddl exec")) {
        std::cerr << "ddl exec: " << *why << "\n";
        return exit_code::k_bad_input;
    }
    std::vector<NodeState> nodes;
    for (const auto& n : ctx.state.nodes) {
        if (only.empty() || std::find(only.begin(), only.end(), n.name) != only.end()) nodes.push_back(n);
    }
    for (const auto& o : only) {
        if (!ctx.state.node(o)) {
            std::cerr << "ddl exec: no node \"" << o << "\" in cluster " << ctx.state.cluster << "\n";
            return exit_code::k_bad_input;
        }
    }
    if (container) {
        if (auto s = training_containers_ready(ctx); !s) {
            std::cerr << "ddl exec: " << s.error().message << "\n";
            return exit_code::k_bad_input;
        }
    }
    std::string cmdline = command.size() == 1 ? command[0] : shell_join(command);
    // In the container: the engine's exec with an argv (one word is a shell command line, as on the node).
    auto node_cmdline = [&](const NodeState& n) {
        if (!container) return cmdline;
        std::vector<std::string> argv = ctx.spec.container_engine_argv();
        argv.insert(argv.end(), {"exec", ctx.spec.training_container(n.name)});
        if (command.size() == 1)
            argv.insert(argv.end(), {"sh", "-c", command[0]});
        else
            argv.insert(argv.end(), command.begin(), command.end());
        return shell_join(argv);
    };
    std::mutex out_mutex;
    std::vector<std::string> failed;
    parallel_for(nodes.size(), ctx.options.parallel, [&](std::size_t i) {
        auto r =
            ctx.remote.exec(ctx.endpoint(nodes[i]), node_cmdline(nodes[i]), std::chrono::seconds(timeout_s));
        std::lock_guard lock(out_mutex);
        if (!r) {
            std::cerr << "[" << nodes[i].name << "] error: " << r.error().message << "\n";
            failed.push_back(nodes[i].name + " (" + r.error().message + ")");
            return;
        }
        for (const auto& line : split_lines(r->out))
            std::cout << "[" << nodes[i].name << "] " << line << "\n";
        for (const auto& line : split_lines(r->err))
            std::cerr << "[" << nodes[i].name << "] " << line << "\n";
        if (!r->ok()) failed.push_back(nodes[i].name + " (exit " + std::to_string(r->exit_status) + ")");
    });
    std::cout.flush();
    if (!failed.empty()) {
        std::sort(failed.begin(), failed.end());
        std::cerr << "ddl exec: failed on " << failed.size() << " of " << nodes.size()
                  << " node(s): " << join(failed, ", ") << "\n";
        return exit_code::k_failure;
    }
    return exit_code::k_ok;
}

namespace {

// OpenSSH's command line for one node, with the cluster's key, its pinned host keys and the node's jump
// host; `extra` goes before the destination.
std::vector<std::string> openssh_argv(const Context& ctx, const NodeState& n,
                                      const std::vector<std::string>& extra) {
    std::vector<std::string> argv{"ssh",
                                  "-i",
                                  n.key.empty() ? ctx.key_path() : n.key,
                                  "-o",
                                  "IdentitiesOnly=yes",
                                  "-o",
                                  "UserKnownHostsFile=" + ctx.known_hosts_path(),
                                  "-o",
                                  "StrictHostKeyChecking=yes",
                                  "-p",
                                  std::to_string(n.port),
                                  "-l",
                                  n.user};
    if (auto j = ctx.jump_endpoint(n))
        argv.insert(argv.end(), {"-o", "ProxyCommand=" + ctx.openssh_proxy_command(*j)});
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(n.address);
    return argv;
}

[[noreturn]] void exec_openssh(std::vector<std::string> argv, const char* who) {
    std::vector<char*> cargv;
    for (auto& s : argv)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);
    log::debug("exec: " + shell_join(argv));
    execvp("ssh", cargv.data());
    std::cerr << who << ": cannot run ssh (install openssh-client)\n";
    std::exit(exit_code::k_failure);
}

const NodeState* find_node_or_explain(const Context& ctx, const std::string& node, const char* who) {
    if (const NodeState* n = ctx.state.node(node)) return n;
    std::vector<std::string> names;
    for (const auto& x : ctx.state.nodes)
        names.push_back(x.name);
    std::cerr << who << ": no node \"" << node << "\" in cluster " << ctx.state.cluster
              << "\nhint: nodes are " << join(names, ", ") << "\n";
    return nullptr;
}

} // namespace

int cmd_ssh(const GlobalOptions& g, const std::string& ref, const std::string& node,
            const std::vector<std::string>& command) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, ref, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl ssh: " << oc.error().message << "\n";
        return open_rc;
    }
    auto& ctx = *(*oc)->ctx;
    if (auto why = (*oc)->driver->why_no_ssh("ddl ssh")) {
        std::cerr << "ddl ssh: " << *why << "\n";
        return exit_code::k_bad_input;
    }
    const NodeState* n = find_node_or_explain(ctx, node, "ddl ssh");
    if (!n) return exit_code::k_bad_input;
    // An interactive terminal is OpenSSH's job; ddl hands it the cluster's key and pinned host keys.
    auto argv = openssh_argv(ctx, *n, {});
    if (!command.empty()) {
        argv.push_back("--");
        argv.insert(argv.end(), command.begin(), command.end());
    }
    exec_openssh(std::move(argv), "ddl ssh");
}

int cmd_tunnel(const GlobalOptions& g, const std::string& ref, const std::string& service, int local_port,
               const std::string& node) {
    int open_rc = exit_code::k_failure;
    auto oc = open_cluster(g, ref, false, "", &open_rc);
    if (!oc) {
        std::cerr << "ddl tunnel: " << oc.error().message << "\n";
        return open_rc;
    }
    auto& ctx = *(*oc)->ctx;
    if (auto why = (*oc)->driver->why_no_ssh("ddl tunnel")) {
        std::cerr << "ddl tunnel: " << *why << "\n";
        return exit_code::k_bad_input;
    }
    const NodeState* n = find_node_or_explain(
        ctx, node.empty() ? ctx.state.nodes.empty() ? "master" : ctx.state.nodes.front().name : node,
        "ddl tunnel");
    if (!n) return exit_code::k_bad_input;
    // Services bind to the node's localhost only; the tunnel is the way in.
    int remote_port = 0;
    std::string path = "/";
    if (service == "jupyter") {
        if (!ctx.spec.services.jupyter) {
            std::cerr << "ddl tunnel: cluster " << ctx.state.cluster
                      << " has no JupyterLab\nhint: set services.jupyter: true and run ddl deploy again\n";
            return exit_code::k_bad_input;
        }
        remote_port = ctx.spec.services.jupyter_port;
        path = "/lab?token=" + ctx.state.jupyter_token;
    } else if (service == "grafana" || service == "prometheus") {
        if (!ctx.spec.services.monitoring) {
            std::cerr << "ddl tunnel: cluster " << ctx.state.cluster
                      << " has no monitoring\nhint: set services.monitoring: true and run ddl deploy again\n";
            return exit_code::k_bad_input;
        }
        remote_port = service == "grafana" ? 3000 : 9090;
    } else if (auto p = parse_int(service); p && *p >= 1 && *p <= 65535) {
        remote_port = static_cast<int>(*p);
    } else {
        std::cerr << "ddl tunnel: unknown service \"" << service
                  << "\"\nhint: jupyter, grafana, prometheus or a port number\n";
        return exit_code::k_bad_input;
    }
    if (local_port == 0) local_port = remote_port;
    std::string fwd = "127.0.0.1:" + std::to_string(local_port) + ":127.0.0.1:" + std::to_string(remote_port);
    // The URL goes to the terminal only (it may carry the Jupyter token); logs never see it.
    std::cout << service << " on " << n->name << ": http://127.0.0.1:" << local_port << path
              << "\n(Ctrl-C closes the tunnel)" << std::endl;
    exec_openssh(openssh_argv(ctx, *n, {"-N", "-o", "ExitOnForwardFailure=yes", "-L", fwd}), "ddl tunnel");
}

} // namespace ddl::cli
