#include "targets/Registry.hpp"

#include "targets/TargetList.hpp"
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
#define DDL_ENTRY(name, Name) {name##_kind(), [] { return std::make_unique<Name##Target>(); }},
    static const std::vector<TargetEntry> entries{DDL_TARGETS(DDL_ENTRY)};
#undef DDL_ENTRY
    return entries;
}

Result<std::unique_ptr<TargetDriver>> make_target_driver(const std::string& name) {
    for (const auto& e : target_registry())
        if (e.kind.name() == name) return e.driver();
    return Error{"there is no target \"" + name +
                 "\" in this version of ddl (targets: " + join(target_names(), ", ") + ")"};
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
