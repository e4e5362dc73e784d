#include "targets/Registry.hpp"

#include "targets/aws/AwsSection.hpp"
#include "targets/aws/AwsTarget.hpp"
#include "targets/gpulab/GpulabSection.hpp"
#include "targets/gpulab/GpulabTarget.hpp"
#include "targets/local/LocalSection.hpp"
#include "targets/local/LocalTarget.hpp"
#include "targets/openstack/OpenstackSection.hpp"
#include "targets/openstack/OpenstackTarget.hpp"
#include "targets/slurm/SlurmSection.hpp"
#include "targets/slurm/SlurmTarget.hpp"
#include "targets/ssh/SshSection.hpp"
#include "targets/ssh/SshTarget.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"
#include "targets/virtualwall/VirtualwallTarget.hpp"
#include "util/Strings.hpp"

namespace ddl {

const std::vector<TargetEntry>& target_registry() {
    // The one list of targets. Adding one: its folder, a line here, a name in src/targets/CMakeLists.txt.
    static const std::vector<TargetEntry> entries{
        {openstack_kind(), [] { return std::make_unique<OpenstackTarget>(); }},
        {aws_kind(), [] { return std::make_unique<AwsTarget>(); }},
        {virtualwall_kind(), [] { return std::make_unique<VirtualwallTarget>(); }},
        {gpulab_kind(), [] { return std::make_unique<GpulabTarget>(); }},
        {ssh_kind(), [] { return std::make_unique<SshTarget>(); }},
        {slurm_kind(), [] { return std::make_unique<SlurmTarget>(); }},
        {local_kind(), [] { return std::make_unique<LocalTarget>(); }},
    };
    return entries;
}

const TargetKinds& target_kinds() {
    static const TargetKinds kinds = [] {
        TargetKinds out;
        for (const auto& e : target_registry())
            out.push_back(&e.kind);
        return out;
    }();
    return kinds;
}

std::vector<std::string> target_names() {
    std::vector<std::string> out;
    for (const auto& e : target_registry())
        out.push_back(e.kind.name());
    return out;
}

Result<std::unique_ptr<TargetDriver>> make_target_driver(const std::string& name) {
    for (const auto& e : target_registry())
        if (e.kind.name() == name) return e.driver();
    return Error{"there is no target \"" + name +
                 "\" in this version of ddl (targets: " + join(target_names(), ", ") + ")"};
}

SpecLoadResult load_spec_file(const std::string& path, SpecOrigin origin) {
    return SpecLoader::load_file(path, target_kinds(), origin);
}

SpecLoadResult load_spec_string(const std::string& text, const std::string& display_name, SpecOrigin origin) {
    return SpecLoader::load_string(text, display_name, target_kinds(), origin);
}

Result<RenderedFiles> render_spec(const Spec& spec, const RenderInputs& inputs) {
    auto driver = make_target_driver(spec.target);
    if (!driver) return driver.error();
    auto files = (*driver)->render(spec, inputs);
    if (!files) return files.error();
    files->merge(render_common(spec));
    return files;
}

} // namespace ddl
