#include "provision/Targets.hpp"

#include "provision/GpulabTarget.hpp"
#include "provision/LocalTarget.hpp"
#include "provision/OpenstackTarget.hpp"
#include "provision/SlurmTarget.hpp"
#include "provision/SshTarget.hpp"
#include "provision/VirtualwallTarget.hpp"

#include <functional>
#include <map>

namespace ddl {

Result<std::unique_ptr<TargetDriver>> make_target_driver(Target target) {
    using Factory = std::function<std::unique_ptr<TargetDriver>()>;
    // Targets without an entry have no provisioner yet; `ddl render` says the same.
    static const std::map<Target, Factory> table{
        {Target::openstack, [] { return std::make_unique<OpenstackTarget>(); }},
        {Target::local, [] { return std::make_unique<LocalTarget>(); }},
        {Target::ssh, [] { return std::make_unique<SshTarget>(); }},
        {Target::slurm, [] { return std::make_unique<SlurmTarget>(); }},
        {Target::virtualwall, [] { return std::make_unique<VirtualwallTarget>(); }},
        {Target::gpulab, [] { return std::make_unique<GpulabTarget>(); }},
    };
    auto it = table.find(target);
    if (it == table.end())
        return Error{"deploying to target " + to_string(target) +
                     " is not available in this version of ddl; see the README's target table"};
    return it->second();
}

} // namespace ddl
