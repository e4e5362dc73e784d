#include "cli/GcExpired.hpp"

#include "cli/LeaseText.hpp"
#include "cli/OptionGroups.hpp"
#include "spec/SpecLoader.hpp"
#include "targets/Kinds.hpp"
#include "targets/Registry.hpp"
#include "util/Files.hpp"
#include "util/Process.hpp"
#include "util/Strings.hpp"

namespace ddl::cli {

std::string asked_without_spec() {
    return targets_that([](TargetDriver& d) {
        const auto* leaks = d.leaked_clusters();
        return leaks != nullptr && !leaks->needs_spec();
    });
}

Result<SpecTarget> spec_target(const std::string& file) {
    auto loaded = load_spec_file(file);
    if (!loaded.spec) return Error{"--spec " + file + ":\n" + loaded.diagnostics.format_text()};
    auto d = make_target_driver(loaded.spec->target);
    if (!d) return d.error();
    std::shared_ptr<TargetDriver> driver = std::move(*d);
    const auto* leaks = driver->leaked_clusters();
    if (leaks == nullptr || !leaks->needs_spec())
        return Error{"--spec " + file + ": ddl cannot ask target " + loaded.spec->target +
                     " for its clusters with a spec; use --target (" + asked_without_spec() +
                     ") or the state folder"};
    return SpecTarget{.file = file, .spec = std::move(*loaded.spec), .driver = std::move(driver)};
}

ExpiryVerdict judge_target_expiry(const FoundCluster& found, const std::string& state_at,
                                  const std::string& here, time_point now) {
    if (!state_at.empty() && state_at == here)
        return {TargetExpiry::state_here, "its state is in this state folder"};
    if (!state_at.empty())
        return {TargetExpiry::state_elsewhere,
                "its state is in " + state_at + ", where `ddl gc --expired` decides on it"};
    if (found.expires.empty())
        return {TargetExpiry::not_recorded,
                "it records no end of its lifetime (deployed without `lifetime`, or by a ddl that did not "
                "record it), so it is left alone"};
    auto end = parse_iso_utc(found.expires);
    if (!end || iso_utc(*end) != found.expires)
        return {TargetExpiry::unreadable, "the end of its lifetime it records (\"" + found.expires +
                                              "\") is not a UTC time, so it is left alone"};
    if (*end > now)
        return {TargetExpiry::not_yet,
                "its lifetime ends " + found.expires + " (in " + time_left(*end, now) + ")"};
    std::string why = "its lifetime ended " + found.expires;
    why += found.state_dir.empty() ? "; it records no state folder"
                                   : "; its state folder " + found.state_dir + " is gone";
    return {TargetExpiry::expired, why};
}

Result<std::vector<ExpiredFound>>
expired_on_targets(const StateStore& store, const std::vector<std::string>& specs, const std::string& prefix,
                   time_point now, std::vector<std::string>& notes, std::vector<std::string>& problems) {
    std::vector<ExpiredFound> out;
    SystemProcessRunner proc;
    for (const auto& file : specs) {
        auto st = spec_target(file);
        if (!st) return st.error();
        const std::string& target = st->spec.target;
        auto found = st->driver->leaked_clusters()->find_clusters(&st->spec, proc);
        if (!found) {
            problems.push_back("target " + target + " (" + file + "): " + found.error().message);
            continue;
        }
        for (auto& f : *found) {
            if (!starts_with(f.cluster, prefix) || !is_dns_label(f.cluster)) continue;
            const std::string here = store.cluster_dir(f.cluster);
            std::string state_at;
            if (!f.state_dir.empty() && path_exists(f.state_dir + "/state.json"))
                state_at = f.state_dir;
            else if (f.state_dir.empty() && path_exists(here + "/state.json"))
                state_at = here;
            auto verdict = judge_target_expiry(f, state_at, here, now);
            switch (verdict.what) {
            case TargetExpiry::state_here:
                break;
            case TargetExpiry::expired:
                out.push_back({.target = target, .driver = st->driver, .found = f, .why = verdict.why});
                break;
            case TargetExpiry::not_yet:
                notes.push_back("not yet: " + f.cluster + " (" + target + ": " + verdict.why + ")");
                break;
            default:
                notes.push_back("not touched: " + f.cluster + " (" + target + ": " + verdict.why + ")");
                break;
            }
        }
    }
    return out;
}

} // namespace ddl::cli
