#include "targets/openstack/OpenstackTarget.hpp"

#include "targets/openstack/OpenstackInputs.hpp"
#include "targets/openstack/OpenstackPreflight.hpp"
#include "terraform/TerraformInputs.hpp"
#include "util/Strings.hpp"

#include <cstdlib>

namespace ddl {
namespace {

// "Backend Type: s3": `endpoints`, `use_path_style` and the skip_* settings an S3-compatible store needs
// came with Terraform 1.6, `skip_s3_checksum` with 1.6.3 (hashicorp/terraform#34127); 1.5 refuses them as
// unsupported arguments at init. Type http without an address reads it from the environment.
Status check_state_backend(const BackendSpec& backend, const TerraformTool& tool) {
    if (backend.type == "http" && backend.address.empty()) {
        for (const char* var : {"TF_HTTP_ADDRESS", "TF_HTTP_LOCK_ADDRESS", "TF_HTTP_UNLOCK_ADDRESS"}) {
            const char* v = std::getenv(var);
            if (v == nullptr || *v == '\0')
                return Error{
                    std::string("openstack.state_backend: type http without an address takes the "
                                "state's address from the environment, but ") +
                    var +
                    " is not set; set TF_HTTP_ADDRESS to the state URL and TF_HTTP_LOCK_ADDRESS and "
                    "TF_HTTP_UNLOCK_ADDRESS to <that URL>/lock (GitLab CI: docs/ci/gitlab-ci.yml does), "
                    "or give state_backend.address"};
        }
    }
    if (backend.type == "s3" && !backend.endpoint.empty() && tool.name == "terraform" &&
        !tool.at_least(1, 6, 3))
        return Error{
            "openstack.state_backend: an S3-compatible endpoint needs Terraform 1.6.3 or newer (for the "
            "backend's endpoints, use_path_style and skip_s3_checksum settings), but " +
            tool.path + " is " + tool.version +
            "; upgrade Terraform, or keep the state elsewhere (type http or local)"};
    return {};
}

} // namespace

std::vector<std::string> OpenstackTarget::kept_while_stopped(const Context& ctx) const {
    const auto& os = ctx.spec.target_section<OpenstackSpec>();
    return {std::to_string(ctx.state.nodes.size()) + " boot volume(s) of " +
                std::to_string(os.boot_volume_gb) + " GB (Cinder quota and storage cost)",
            "the floating IP of the master, the network, router and security group",
            "the servers' flavors: a SHUTOFF server keeps its vCPUs, RAM and GPUs on its host and in the "
            "project's quota (some clouds bill it as running)"};
}

OpenstackTarget::OpenstackTarget()
    : OpenstackTarget(
          Deps{[] { return std::make_unique<CurlHttpClient>(); }, CloudConfig::system_sources()}) {}

OpenstackTarget::OpenstackTarget(Deps deps)
    : TerraformTarget("openstack", openstack_module_files()), m_deps(std::move(deps)) {}

RenderedFiles OpenstackTarget::module_inputs(const Spec& s, const RenderInputs& in) const {
    return {{"terraform.tfvars.json",
             json_file(with_expiry(OpenstackInputs::tfvars(s, in.public_key, in.state_dir), in.expires))},
            {"backend.tf.json", json_file(OpenstackInputs::backend(s))}};
}

Result<std::map<std::string, std::string>> OpenstackTarget::terraform_env(const Spec& spec) const {
    auto cloud = CloudConfig::load(spec.target_section<OpenstackSpec>().cloud, m_deps.sources);
    if (!cloud) return cloud.error();
    return cloud->terraform_env();
}

Status OpenstackTarget::preflight_target(const Context& ctx, const TerraformTool& tool) {
    if (auto s = check_state_backend(ctx.spec.target_section<OpenstackSpec>().state_backend, tool); !s)
        return s;
    auto cloud = CloudConfig::load(ctx.spec.target_section<OpenstackSpec>().cloud, m_deps.sources);
    if (!cloud) return cloud.error();
    ctx.progress.note("cloud " + cloud->cloud + " from " + cloud->file);
    if (ctx.options.skip_preflight) {
        ctx.progress.note("pre-flight checks of the cloud skipped (--skip-preflight)");
        return {};
    }
    auto http = m_deps.make_http();
    OpenstackClient client(*http, cloud->auth, api_timeout(m_deps.sources.getenv("DDL_OPENSTACK_TIMEOUT")));
    auto result = OpenstackPreflight(client).run(ctx.spec);
    if (!result) return Error{"pre-flight: " + result.error().message};
    return report_checks(ctx, result->problems, result->notes);
}

} // namespace ddl
