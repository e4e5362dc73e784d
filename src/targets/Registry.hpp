#pragma once
// The targets ddl knows, and the spec loading and rendering that need all of them. Registry.cpp is the one
// place that lists targets; everything else asks it (or the spec's section, or the driver).
#include "provision/TargetDriver.hpp"
#include "spec/SpecLoader.hpp"
#include "spec/TargetKind.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ddl {

struct TargetEntry {
    const TargetKind& kind;                                // its spec section: keys, defaults, rules
    std::function<std::unique_ptr<TargetDriver>()> driver; // renders, provisions, destroys; capabilities
};

// Every target in the order ddl lists them (messages, `ddl init`, completion).
const std::vector<TargetEntry>& target_registry();
const TargetKinds& target_kinds();
std::vector<std::string> target_names();

// The driver of target `name`, or an Error naming the targets there are.
Result<std::unique_ptr<TargetDriver>> make_target_driver(const std::string& name);

// SpecLoader with every registered target.
SpecLoadResult load_spec_file(const std::string& path, SpecOrigin origin = SpecOrigin::file);
SpecLoadResult load_spec_string(const std::string& text, const std::string& display_name,
                                SpecOrigin origin = SpecOrigin::file);

// Everything `ddl render` writes for the spec: the target's own files and the common ones.
Result<RenderedFiles> render_spec(const Spec& spec, const RenderInputs& inputs = {});

} // namespace ddl
