#pragma once
// The targets ddl knows with their drivers, and the rendering that needs all of them. The list itself is
// src/targets/TargetList.hpp; the spec side (kinds, spec loading) is targets/Kinds.hpp, included here.
#include "provision/TargetDriver.hpp"
#include "targets/Kinds.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddl {

struct TargetEntry {
    const TargetKind& kind;                                // its spec section: keys, defaults, rules
    std::function<std::unique_ptr<TargetDriver>()> driver; // renders, provisions, destroys; capabilities
};

// Every target in the order of TargetList.hpp.
const std::vector<TargetEntry>& target_registry();

// The driver of target `name`, or an Error naming the targets there are.
Result<std::unique_ptr<TargetDriver>> make_target_driver(const std::string& name);

// Everything `ddl render` writes for the spec: the target's own files and the common ones.
Result<RenderedFiles> render_spec(const Spec& spec, const RenderInputs& inputs = {});

} // namespace ddl
