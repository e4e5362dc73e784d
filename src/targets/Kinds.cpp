#include "targets/Kinds.hpp"

#include "targets/TargetList.hpp"
#include "targets/aws/AwsSection.hpp"
#include "targets/gpulab/GpulabSection.hpp"
#include "targets/local/LocalSection.hpp"
#include "targets/openstack/OpenstackSection.hpp"
#include "targets/slurm/SlurmSection.hpp"
#include "targets/ssh/SshSection.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"

namespace ddl {

const TargetKinds& target_kinds() {
#define DDL_KIND(name, Name) &name##_kind(),
    static const TargetKinds kinds{DDL_TARGETS(DDL_KIND)};
#undef DDL_KIND
    return kinds;
}

std::vector<std::string> target_names() {
    std::vector<std::string> out;
    for (const auto* k : target_kinds())
        out.push_back(k->name());
    return out;
}

const TargetKind* find_target_kind(const std::string& name) {
    for (const auto* k : target_kinds())
        if (k->name() == name) return k;
    return nullptr;
}

SpecLoadResult load_spec_file(const std::string& path, SpecOrigin origin) {
    return SpecLoader::load_file(path, target_kinds(), origin);
}

SpecLoadResult load_spec_string(const std::string& text, const std::string& display_name, SpecOrigin origin) {
    return SpecLoader::load_string(text, display_name, target_kinds(), origin);
}

} // namespace ddl
