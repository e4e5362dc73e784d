#include "provision/Targets.hpp"

#include "provision/LocalTarget.hpp"
#include "provision/OpenstackTarget.hpp"
#include "provision/SshTarget.hpp"

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
    };
    auto it = table.find(target);
    if (it == table.end())
        return Error{"deploying to target " + to_string(target) +
                     " is not available in this version of ddl (targets openstack, local and ssh are); see "
                     "the README's "
                     "target table"};
    return it->second();
}

} // namespace ddl
