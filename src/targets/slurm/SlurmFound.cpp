// `ddl gc` on Slurm from the queue's side: every job ddl submits carries the comment "ddl-deploy:<cluster>"
// and runs in the cluster's state folder (sbatch --chdir), so `squeue` finds a cluster whose state
// folder is gone, with its age from the submit time; `scancel` removes it.
#include "targets/slurm/SlurmTarget.hpp"
#include "util/Strings.hpp"

#include <ctime>
#include <pwd.h>
#include <unistd.h>

namespace ddl {
namespace {

std::string user_name() {
    if (const passwd* pw = getpwuid(geteuid()); pw != nullptr && pw->pw_name != nullptr) return pw->pw_name;
    return std::to_string(geteuid());
}

// squeue prints times in the local time zone, "2026-11-25T16:20:01".
std::optional<long long> age_of(const std::string& local_time) {
    std::tm tm{};
    if (!strptime(local_time.c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
    tm.tm_isdst = -1;
    return static_cast<long long>(std::time(nullptr) - std::mktime(&tm));
}

} // namespace

Result<std::vector<FoundCluster>> SlurmTarget::find_clusters(const Spec* /*spec*/,
                                                             ProcessRunner& proc) const {
    // %i job id, %k comment, %V submit time, %Z working directory, %T state.
    Command c{.argv = {"squeue", "-h", "-u", user_name(), "-o", "%i|%k|%V|%Z|%T"},
              .timeout = std::chrono::seconds(30)};
    auto r = proc.run(c);
    if (!r) return r.error();
    if (!r->success()) return Error{describe_failure(c, *r)};
    const std::string prefix = job_comment("");
    std::vector<FoundCluster> out;
    for (const auto& line : split_lines(r->out)) {
        auto f = split(line, '|');
        if (f.size() != 5 || !starts_with(trim(f[1]), prefix)) continue;
        FoundCluster found;
        found.cluster = trim(f[1]).substr(prefix.size());
        found.age_s = age_of(trim(f[2])).value_or(0);
        found.state_dir = trim(f[3]);
        found.detail = "Slurm job " + trim(f[0]) + " " + trim(f[4]);
        found.record = {{"job_id", trim(f[0])}};
        out.push_back(std::move(found));
    }
    return out;
}

Status SlurmTarget::destroy_found(const FoundCluster& found, ProcessRunner& proc, Progress& progress) {
    const std::string id = found.record.value("job_id", "");
    if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
        return Error{"the record of " + found.cluster + " has no job id"};
    Command c{.argv = {"scancel", id}, .timeout = std::chrono::seconds(60)};
    auto r = proc.run(c);
    if (!r) return r.error();
    if (!r->success() && r->err.find("Invalid job id") == std::string::npos)
        return Error{describe_failure(c, *r)};
    progress.note("cancelled Slurm job " + id + " of cluster " + found.cluster);
    return {};
}

} // namespace ddl
