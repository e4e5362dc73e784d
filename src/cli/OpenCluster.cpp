#include "cli/OpenCluster.hpp"

#include "cli/ClusterRef.hpp"
#include "cli/Lifetime.hpp"
#include "cli/Signals.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "provision/Pipeline.hpp"
#include "spec/SpecLoader.hpp"
#include "state/KnownFolders.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/KillPoint.hpp"

#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <unistd.h>

namespace ddl::cli {
namespace {

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

} // namespace

Result<std::unique_ptr<OpenCluster>> open_cluster(const std::string& state_dir, const std::string& ref,
                                                  bool mutate, const std::string& what, int* rc) {
    auto oc = std::make_unique<OpenCluster>(StateStore(state_dir));
    if (rc) *rc = exit_code::k_bad_input;
    auto name = resolve_cluster(oc->store, ref);
    if (!name) return name.error();
    if (!oc->store.exists(*name)) return cluster_not_found(oc->store, ref, *name);
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
    auto loaded =
        load_spec_string(oc->state.spec_text, oc->state.cluster + " (stored spec)", SpecOrigin::stored);
    if (!loaded.spec)
        return Error{"the stored spec of cluster " + oc->state.cluster + " cannot be read by this ddl:\n" +
                     loaded.diagnostics.format_text()};
    // What it was deployed with stays manageable; the user learns what a re-deploy would have to change.
    if (loaded.diagnostics.has_errors())
        std::cerr << "ddl: warning: cluster " << oc->state.cluster
                  << " was deployed with a spec this ddl refuses; this command uses it as deployed, but "
                     "`ddl deploy` needs it fixed first:\n"
                  << loaded.diagnostics.format_text();
    // The spec file edited since deploy: said in one line, whatever the command (sync refuses on it).
    const std::string file = names_spec_file(ref) ? ref : oc->state.spec_file;
    if (!file.empty()) {
        if (auto text = read_regular_file(file, SpecLoader::k_max_bytes)) {
            oc->drift = spec_drift(file, oc->state.spec_text, *text);
            if (oc->drift.changed()) std::cerr << "ddl: note: " << oc->drift.line() << "\n";
        }
    }
    oc->ctx.emplace(
        Context{*loaded.spec, oc->state, oc->store, oc->proc, oc->remote, oc->progress, {}, &g_interrupted});
    log::add_file(oc->store.cluster_dir(*name) + "/logs/ddl.log");
    return oc;
}

Result<std::unique_ptr<OpenCluster>> open_for_deploy(const std::string& state_dir, const Spec& spec,
                                                     const std::string& spec_file,
                                                     const DeployOptions& options, const std::string& what,
                                                     int& rc) {
    rc = exit_code::k_failure;
    auto oc = std::make_unique<OpenCluster>(StateStore(state_dir));
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
        oc->before = state;
        if (state.target != spec.target) {
            rc = exit_code::k_bad_input;
            return Error{"cluster " + spec.name + " exists on target " + state.target +
                         "\nhint: destroy it first (ddl destroy " + spec.name + ") or pick another name"};
        }
        if (state.destroying)
            return Error{"cluster " + spec.name + " is half destroyed\nhint: finish with `ddl destroy " +
                         spec.name + "`, then deploy again"};
        // A stopped cluster's machines answer nothing: a deploy would wait for SSH in vain.
        if (state.stopped()) {
            rc = exit_code::k_bad_input;
            return Error{"cluster " + spec.name + " is stopped (since " + state.stopped_at +
                         ")\nhint: ddl start " + spec.name + ", then deploy"};
        }
        // A changed spec re-runs everything after validate; each phase converges to the new spec.
        // So does a changed lifetime (not in the normalized spec): where the target records its end
        // (OpenStack, AWS: render/Expiry.hpp), provision writes it again.
        if (state.spec != spec.to_json() || stored_spec(state).life.lifetime_s != spec.life.lifetime_s)
            state.reset_phases_from(phase_names(), "render");
    } else {
        state.cluster = spec.name;
        state.target = spec.target;
        state.created_at = utc_now_iso();
    }
    state.spec = spec.to_json();
    if (spec.services.jupyter && state.jupyter_token.empty()) {
        auto token = random_hex(24);
        if (!token) return token.error();
        state.jupyter_token = *token;
    }
    log::register_secret(state.jupyter_token);
    auto text = read_file(spec_file);
    state.spec_text = text ? *text : "";
    std::error_code ec;
    const auto where = std::filesystem::absolute(spec_file, ec).lexically_normal();
    state.spec_file = ec ? spec_file : where.string();
    if (auto s = make_dirs(store.cluster_dir(spec.name) + "/logs", 0700); !s) return s.error();
    log::add_file(store.cluster_dir(spec.name) + "/logs/ddl.log");
    if (auto s = store.save(state); !s) return s.error();
    // `ddl list --all` and a cluster named from another folder find it (a failure costs only that).
    if (auto s = remember_state_folder(store.root()); !s) log::warn(s.error().message);
    kill_point("deploy:opened");
    install_signal_handlers();
    oc->ctx.emplace(Context{spec, state, store, oc->proc, oc->remote, oc->progress, options, &g_interrupted});
    return oc;
}

const NodeState* master_of(const Context& ctx) {
    for (const auto& n : ctx.state.nodes)
        if (n.group == "master") return &n;
    return ctx.state.nodes.empty() ? nullptr : &ctx.state.nodes.front();
}

} // namespace ddl::cli
