#include "targets/virtualwall/VirtualwallSection.hpp"

namespace ddl {

std::string virtualwall_starter_body() {
    return R"(
nodes:
  master: {flavor: pcgen05-gpu5090, gpus: 1}
  workers: {count: 3, flavor: pcgen05-gpu5090, gpus: 1}

# SLICES Basic Infrastructure through the `slices` CLI (log in first: `slices auth login`). For a GENI
# slice (the legacy Virtual Wall path) use client: geni with testbed, hardware_type and disk_image.
virtualwall:
  client: slices
  site: be-gent1-bi-baremetal1
  project: myproject
  image: "Ubuntu 22.04.5"
  duration: 1d
)";
}

} // namespace ddl
