#include "targets/slurm/SlurmSection.hpp"

#include <regex>

namespace ddl {

nlohmann::json SlurmSpec::to_json() const {
    return {{"partition", partition},
            {"nodes", nodes},
            {"gpus_per_node", gpus_per_node},
            {"tasks_per_node", tasks_per_node},
            {"time", time},
            {"account", account},
            {"runtime_dir", runtime_dir},
            {"start_timeout_minutes", start_timeout_minutes}};
}

namespace {

class SlurmKind : public TargetKind {
public:
    std::optional<Refusal> refuse_stop() const override {
        return Refusal{"autostop.action: stop is not available on target slurm: a Slurm allocation ends with "
                       "its job; its nodes are not kept for it stopped with their disks",
                       "use action: destroy (the job ends and its nodes go back to the partition)"};
    }
    std::optional<Refusal> refuse_node_credential() const override {
        return Refusal{
            "autostop.node_credential is not needed on target slurm: the idle clock already ends the "
            "allocation itself, with no credential (it scancels its own job)",
            "remove node_credential"};
    }
    std::string name() const override { return "slurm"; }
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<SlurmSpec>(); }
    std::string starter_body() const override { return slurm_starter_body(); }
    std::string node_count_hint() const override { return "set the number of nodes with slurm.nodes"; }
    std::optional<Refusal> refuse_spares() const override {
        return Refusal{"nodes.spares does not apply to target slurm: Slurm gives the allocation its nodes",
                       "remove nodes.spares; a failed node is left out with `ddl deploy --replace NODE` "
                       "(a new allocation that excludes it)"};
    }
    // On slurm the tasks per node are the slots; a second, different number would be silently ignored.
    void check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const override {
        const auto& s = spec.target_section<SlurmSpec>();
        if (s.tasks_per_node > 0 && spec.runtime.slots_per_node > 0 &&
            s.tasks_per_node != spec.runtime.slots_per_node)
            r.diags().error(r.pos(doc["runtime"]["slots_per_node"]),
                            "runtime.slots_per_node (" + std::to_string(spec.runtime.slots_per_node) +
                                ") disagrees with slurm.tasks_per_node (" + std::to_string(s.tasks_per_node) +
                                ")",
                            "on slurm the tasks per node are the slots: set only slurm.tasks_per_node");
        // ddl sync and setup reach each node over SSH; Slurm's compute nodes are reached only through srun.
        const char* k_shared_hint =
            "ddl reaches Slurm nodes only through srun: put the code on the cluster's "
            "shared file system (e.g. rsync to the login node) and cd there in the "
            "command you give ddl run";
        if (!spec.work.workdir.empty())
            r.diags().error(r.pos(doc["workdir"]), "workdir does not apply to target slurm", k_shared_hint);
        if (!spec.work.setup.empty())
            r.diags().error(r.pos(doc["setup"]), "setup does not apply to target slurm", k_shared_hint);
    }
    std::optional<Refusal> refuse_training_image(const Spec&) const override {
        return Refusal{"runtime.image does not apply to target slurm",
                       "ddl reaches Slurm nodes only through srun; run a container from your "
                       "job script (e.g. with enroot or apptainer)"};
    }

    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "slurm";
        r.check_keys(n, p,
                     {"partition", "nodes", "gpus_per_node", "tasks_per_node", "time", "account",
                      "runtime_dir", "start_timeout_minutes"});
        auto& s = spec.target_section<SlurmSpec>();
        // Names become #SBATCH lines of a shell script: only Slurm's own name characters get through.
        static const std::regex name_re("^[A-Za-z0-9_.-]+$");
        static const std::regex partitions_re("^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$");
        if (auto x = r.string(n, "partition", p, true, "the partition to submit to, e.g. \"gpu\"")) {
            if (!std::regex_match(*x, partitions_re))
                r.diags().error(
                    r.pos(n["partition"]),
                    "slurm.partition must be a Slurm partition name (got \"" + SectionReader::printable(*x) +
                        "\")",
                    "letters, digits, '_', '.', '-'; several as \"gpu,gpu-long\"; `sinfo -s` lists "
                    "them");
            else
                s.partition = *x;
        }
        if (auto x = r.integer(n, "nodes", p, 1, 1024)) s.nodes = static_cast<int>(*x);
        if (auto x = r.integer(n, "gpus_per_node", p, 0, 16)) s.gpus_per_node = static_cast<int>(*x);
        if (auto x = r.integer(n, "tasks_per_node", p, 0, 256)) s.tasks_per_node = static_cast<int>(*x);
        if (auto x = r.string(n, "time", p)) {
            static const std::regex re("^([0-9]+-)?([0-9]{1,2}:)?[0-9]{1,2}:[0-9]{2}$|^[0-9]+$");
            if (!std::regex_match(*x, re))
                r.diags().error(r.pos(n["time"]),
                                "slurm.time must be a Slurm time limit (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "e.g. \"02:00:00\", \"1-00:00:00\" or minutes \"90\"");
            else
                s.time = *x;
        }
        if (auto x = r.string(n, "account", p)) {
            if (!x->empty() && !std::regex_match(*x, name_re))
                r.diags().error(
                    r.pos(n["account"]),
                    "slurm.account must be a Slurm account name (got \"" + SectionReader::printable(*x) +
                        "\")",
                    "letters, digits, '_', '.', '-'; `sacctmgr show assoc user=$USER` lists yours");
            else
                s.account = *x;
        }
        if (n["runtime_dir"].IsDefined()) r.abs_path(n, "runtime_dir", p, s.runtime_dir);
        if (auto x = r.integer(n, "start_timeout_minutes", p, 1, 10080))
            s.start_timeout_minutes = static_cast<int>(*x);
    }
};

} // namespace

const TargetKind& slurm_kind() {
    static const SlurmKind kind;
    return kind;
}

} // namespace ddl
