#include "provision/Sweep.hpp"

#include "util/Strings.hpp"

#include <algorithm>
#include <set>

namespace ddl {
namespace {

// One item, up to `attempts` tries; true when removed or already gone.
bool remove_item(const SweepStep& step, const SweepItem& item, const std::string& cluster, Progress& progress,
                 std::vector<std::string>& failed) {
    std::string last;
    for (int attempt = 0; attempt < std::max(step.attempts, 1); ++attempt) {
        auto answer = item.remove();
        if (!answer) {
            last = item.label + ": " + answer.error().message;
            continue;
        }
        if (answer->accepted) {
            progress.note("removed " + item.label + " of cluster " + cluster);
            return true;
        }
        if (step.gone && step.gone(answer->code)) return true;
        last = answer->refusal;
    }
    failed.push_back(last);
    return false;
}

} // namespace

Status run_sweep(const std::string& cluster, const std::vector<SweepStep>& steps, Progress& progress) {
    std::vector<std::string> failed;
    std::set<std::string> failed_steps;
    for (const auto& step : steps) {
        bool blocked = false;
        for (const auto& dep : step.after)
            blocked = blocked || failed_steps.count(dep) > 0;
        if (blocked) {
            failed_steps.insert(step.name);
            continue;
        }
        bool ok = true;
        auto items = step.list();
        if (!items) {
            failed.push_back(items.error().message);
            ok = false;
        } else {
            for (const auto& item : *items)
                ok = remove_item(step, item, cluster, progress, failed) && ok;
        }
        if (!ok) failed_steps.insert(step.name);
        if (!ok && step.stop_on_failure) return Error{join(failed, "; ")};
        if (step.settle) {
            if (auto s = step.settle(); !s) {
                failed.push_back(s.error().message);
                return Error{join(failed, "; ")};
            }
        }
    }
    if (!failed.empty()) return Error{join(failed, "; ") + "; run ddl gc again to retry what is left"};
    return {};
}

} // namespace ddl
