#include "targets/gpulab/GpulabSection.hpp"

#include <regex>

namespace ddl {

nlohmann::json GpulabSpec::to_json() const {
    return {{"project", project},
            {"cluster_id", cluster_id},
            {"docker_image", docker_image},
            {"layout", layout},
            {"gpu_model", gpu_model},
            {"min_cuda_version", min_cuda_version},
            {"cpus_per_gpu", cpus_per_gpu},
            {"memory_gb_per_gpu", memory_gb_per_gpu},
            {"api_url", api_url},
            {"cert", cert},
            {"wait_minutes", wait_minutes},
            {"ssh_port", ssh_port},
            {"max_duration", max_duration},
            {"ssh_via", ssh_via},
            {"project_share", project_share}};
}

namespace {

class GpulabKind : public TargetKind {
public:
    std::optional<Refusal> refuse_stop() const override {
        return Refusal{"autostop.action: stop is not available on target gpulab: a GPULab job's container, "
                       "and its disk, end with the job",
                       "use action: destroy (the jobs end and their GPUs go back to the cluster)"};
    }
    std::optional<Refusal> refuse_node_credential() const override {
        return Refusal{
            "autostop.node_credential is not needed on target gpulab: the idle clock already ends the "
            "allocation itself, with no credential (it ends the jobs' commands)",
            "remove node_credential"};
    }
    std::optional<Refusal> refuse_spares() const override {
        return Refusal{
            "nodes.spares does not apply to target gpulab: its nodes are GPU jobs, held (and counted "
            "against the fair-use limits) whether they train or not",
            "remove nodes.spares; `ddl deploy --replace NODE` submits a new job for a failed one"};
    }
    std::string name() const override { return "gpulab"; }
    std::unique_ptr<TargetSection> defaults() const override { return std::make_unique<GpulabSpec>(); }
    std::string starter_body() const override { return gpulab_starter_body(); }
    bool uses_node_groups() const override { return true; }
    void check(SectionReader& r, const YAML::Node& doc, const Spec& spec) const override {
        if (doc["nodes"].IsDefined() && spec.total_gpus() < 1)
            r.diags().error(r.pos(doc["nodes"]), "target gpulab needs at least one GPU (nodes ask for 0)",
                            "set nodes.master.gpus (and nodes.workers.gpus): one GPULab job holds them all");
        if (spec.target_section<GpulabSpec>().layout == "jobs-per-gpu" && spec.total_gpus() > 1)
            r.diags().error(
                r.pos(doc["gpulab"]["layout"]),
                "gpulab.layout: jobs-per-gpu cannot train across " + std::to_string(spec.total_gpus()) +
                    " jobs: GPULab publishes a job's ports only as host ports mapped on its worker "
                    "and documents no network between jobs, so the rendezvous (runtime.master_port) "
                    "and NCCL's own ports of one job are out of reach of the others",
                "use gpulab.layout: one-job (the default): one job with all " +
                    std::to_string(spec.total_gpus()) + " GPUs on one worker");
    }
    std::optional<Refusal> refuse_training_image(const Spec&) const override {
        return Refusal{"runtime.image does not apply to target gpulab",
                       "GPULab jobs are containers already: set gpulab.docker_image"};
    }

    void parse(SectionReader& r, const YAML::Node& n, Spec& spec) const override {
        const std::string p = "gpulab";
        r.check_keys(n, p,
                     {"project", "cluster_id", "docker_image", "layout", "gpu_model", "min_cuda_version",
                      "cpus_per_gpu", "memory_gb_per_gpu", "api_url", "cert", "wait_minutes", "ssh_port",
                      "max_duration", "ssh_via", "project_share"});
        auto& g = spec.target_section<GpulabSpec>();
        if (auto x = r.string(n, "project", p, true, "the GPULab project the jobs run in")) g.project = *x;
        // GPULab takes both as integers; a typo here would only fail at submit time.
        auto digits = [](const std::string& x) {
            return !x.empty() && x.size() <= 9 && x.find_first_not_of("0123456789") == std::string::npos;
        };
        if (auto x = r.string(n, "cluster_id", p)) {
            if (!digits(*x))
                r.diags().error(r.pos(n["cluster_id"]),
                                "gpulab.cluster_id must be a cluster number (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "`gpulab-cli clusters --short` lists them, e.g. \"4\"");
            else
                g.cluster_id = *x;
        }
        if (auto x = r.string(n, "docker_image", p, true,
                              "the image the jobs run, e.g. nvcr.io/nvidia/pytorch:24.05-py3"))
            g.docker_image = *x;
        if (auto x = r.choice(n, "layout", p, {"one-job", "jobs-per-gpu"})) g.layout = *x;
        if (auto x = r.string(n, "gpu_model", p)) g.gpu_model = *x;
        if (auto x = r.string(n, "min_cuda_version", p)) {
            if (!digits(*x))
                r.diags().error(r.pos(n["min_cuda_version"]),
                                "gpulab.min_cuda_version must be a CUDA major version (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "e.g. \"12\"");
            else
                g.min_cuda_version = *x;
        }
        if (auto x = r.integer(n, "cpus_per_gpu", p, 1, 64)) g.cpus_per_gpu = static_cast<int>(*x);
        if (auto x = r.integer(n, "memory_gb_per_gpu", p, 1, 1024))
            g.memory_gb_per_gpu = static_cast<int>(*x);
        r.url(n, "api_url", p, false, "the client certificate must never travel over plain HTTP", g.api_url);
        if (auto x = r.string(n, "cert", p)) g.cert = *x;
        if (auto x = r.integer(n, "wait_minutes", p, 1, 1440)) g.wait_minutes = static_cast<int>(*x);
        if (auto x = r.integer(n, "ssh_port", p, 1, 65535)) g.ssh_port = static_cast<int>(*x);
        if (auto x = r.choice(n, "ssh_via", p, {"auto", "proxy", "direct"})) g.ssh_via = *x;
        if (auto x = r.boolean(n, "project_share", p)) g.project_share = *x;
        if (auto x = r.string(n, "max_duration", p)) {
            static const std::regex re("^[1-9][0-9]{0,4} ?(minutes?|hours?|days?|weeks?|[mhdw])$");
            if (!std::regex_match(*x, re))
                r.diags().error(r.pos(n["max_duration"]),
                                "gpulab.max_duration must be a duration (got \"" +
                                    SectionReader::printable(*x) + "\")",
                                "a number and a unit, e.g. \"12 hours\", \"2 days\", \"1 week\"");
            else
                g.max_duration = *x;
        }
    }
};

} // namespace

const TargetKind& gpulab_kind() {
    static const GpulabKind kind;
    return kind;
}

} // namespace ddl
