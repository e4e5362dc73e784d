#include "cli/StarterSpecs.hpp"

#include "targets/Registry.hpp"

#include <kainjow/mustache.hpp>

namespace ddl::cli {
namespace {

const char* k_header = R"(# ddl cluster spec — every key is documented in docs/spec.md.
# Check it with `ddl validate {{file}}`, then `ddl deploy {{file}}`.
apiVersion: ddl/v1
name: {{name}}            # DNS-safe: lowercase letters, digits, '-'
target: {{target}}
)";

const char* k_common = R"(
# Services installed by the configure phase.
services:
  nfs: {enabled: true, export: /srv/ddl, mount: /shared}
  jupyter: {enabled: false, port: 8888}   # reached through `ddl ssh` port forwarding only
  monitoring: {enabled: false}

runtime:
  backend: auto          # nccl on GPU nodes, tcp otherwise
  interface: auto        # or e.g. ens3; never lo or docker*
  slots_per_node: auto   # GPUs per node, 1 on CPU-only nodes

hostfile:
  format: openmpi        # openmpi | horovod | mpich
)";

} // namespace

Result<std::string> starter_spec(const std::string& target, const std::string& name) {
    const TargetKind* kind = find_target_kind(target);
    if (!kind) return Error{"unknown target \"" + target + "\""};
    kainjow::mustache::mustache tmpl(std::string(k_header) + kind->starter_body() + k_common);
    kainjow::mustache::data data;
    data.set("name", name);
    data.set("target", target);
    data.set("file", "cluster.yaml");
    return tmpl.render(data);
}

} // namespace ddl::cli
