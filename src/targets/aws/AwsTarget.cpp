#include "targets/aws/AwsTarget.hpp"

#include "targets/aws/AwsInputs.hpp"
#include "targets/aws/AwsPreflight.hpp"
#include "terraform/TerraformInputs.hpp"
#include "util/Strings.hpp"

namespace ddl {
namespace {

Result<AwsCredentials> credentials(const Spec& spec, const AwsCredentials::Sources& src) {
    const auto& a = spec.target_section<AwsSpec>();
    return AwsCredentials::resolve(a.profile, a.region, src);
}

} // namespace

std::string AwsTarget::why_no_stop(const Spec& spec) const {
    if (spec.target_section<AwsSpec>().spot)
        return "its nodes are one-time Spot Instances (aws.spot), which EC2 cannot stop; `ddl destroy` ends "
               "it";
    return "";
}

std::vector<std::string> AwsTarget::kept_while_stopped(const Context& ctx) const {
    const auto& a = ctx.spec.target_section<AwsSpec>();
    return {std::to_string(ctx.state.nodes.size()) + " EBS root volume(s) of " +
                std::to_string(a.root_volume_gb) + " GB (" + a.root_volume_type + ", billed per GB-month)",
            "the VPC, subnet and security groups (no charge); the master's public IPv4 address is released "
            "and a new one comes at start"};
}

AwsTarget::AwsTarget()
    : AwsTarget(Deps{[](std::chrono::milliseconds t) {
                         return std::make_unique<HttpAwsTransport>(std::make_unique<CurlHttpClient>(), t);
                     },
                     AwsCredentials::system_sources()}) {}

AwsTarget::AwsTarget(Deps deps) : TerraformTarget("aws", aws_module_files()), m_deps(std::move(deps)) {}

std::unique_ptr<AwsTransport> AwsTarget::make_transport() const {
    return m_deps.make_transport(api_timeout(m_deps.sources.getenv("DDL_AWS_TIMEOUT")));
}

RenderedFiles AwsTarget::module_inputs(const Spec& s, const RenderInputs& in) const {
    return {{"terraform.tfvars.json",
             json_file(with_expiry(AwsInputs::tfvars(s, in.public_key, in.state_dir), in.expires))}};
}

Result<std::map<std::string, std::string>> AwsTarget::terraform_env(const Spec& spec) const {
    auto creds = credentials(spec, m_deps.sources);
    if (!creds) return creds.error();
    return creds->terraform_env();
}

Status AwsTarget::preflight_target(const Context& ctx, const TerraformTool& /*tool*/) {
    auto creds = credentials(ctx.spec, m_deps.sources);
    if (!creds) return creds.error();
    ctx.progress.note("AWS credentials from " + creds->source + ", region " + creds->region);
    if (ctx.options.skip_preflight) {
        ctx.progress.note("pre-flight checks of the account skipped (--skip-preflight)");
        return {};
    }
    if (!creds->delegated_by.empty())
        return Error{
            "pre-flight: AWS profile \"" + creds->profile + "\" gets its credentials through " +
            creds->delegated_by +
            ", which ddl's pre-flight cannot follow; deploy with --skip-preflight (Terraform follows it "
            "itself), or give the profile static keys"};
    auto transport = make_transport();
    Ec2Client client(*transport, *creds);
    auto result = AwsPreflight(client).run(ctx.spec);
    if (!result) return Error{"pre-flight: " + result.error().message};
    return report_checks(ctx, result->problems, result->notes);
}

} // namespace ddl
