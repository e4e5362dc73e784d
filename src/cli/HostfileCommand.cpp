// `ddl hostfile`: the hostfile of the probed nodes (openmpi, horovod or mpich syntax), printed or written.
#include "cli/CommandTable.hpp"
#include "cli/OptionChecks.hpp"
#include "cli/OptionGroups.hpp"
#include "core/Diagnostics.hpp"
#include "provision/HostfileWriter.hpp"
#include "util/Files.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

namespace ddl::cli {
namespace {

struct HostfileArgs {
    std::string cluster;
    std::string format; // empty: the spec's
    std::string out;    // empty: stdout
};

void add_options(CLI::App& sub, HostfileArgs& a) {
    add_cluster_ref(sub, a.cluster, ClusterRef::option);
    sub.add_option("--format", a.format, "openmpi | horovod | mpich (default: the spec's)")
        ->check(CLI::IsMember({"openmpi", "horovod", "mpich"}));
    sub.add_option("-o,--output-file", a.out, "Write to this file instead of stdout")->check(k_non_empty);
}

// The nodes with slots, as a program would want them; the text stays in "text".
void print_json(const ClusterState& st, HostfileFormat f, const std::string& text) {
    auto nodes = nlohmann::json::array();
    for (const auto& n : st.nodes) {
        if (n.slots > 0)
            nodes.push_back({{"name", n.name}, {"address", n.cluster_address()}, {"slots", n.slots}});
    }
    std::cout << nlohmann::json{{"cluster", st.cluster},
                                {"format", to_string(f)},
                                {"nodes", nodes},
                                {"text", text}}
                     .dump(2)
              << "\n";
}

int hostfile(const Invocation& inv, const HostfileArgs& a) {
    const auto& st = inv.cluster->state;
    HostfileFormat f = inv.cluster->ctx->spec.hostfile_format;
    if (a.format == "openmpi") f = HostfileFormat::openmpi;
    if (a.format == "horovod") f = HostfileFormat::horovod;
    if (a.format == "mpich") f = HostfileFormat::mpich;
    std::string text = format_hostfile(st.nodes, f);
    if (a.out.empty() && inv.g.json) {
        print_json(st, f, text);
        return exit_code::k_ok;
    }
    if (a.out.empty()) {
        std::cout << text;
        return exit_code::k_ok;
    }
    if (auto s = write_file_atomic(a.out, text, 0644); !s)
        return inv.fail(s.error().message, exit_code::k_failure);
    return exit_code::k_ok;
}

} // namespace

CommandBody hostfile_command() {
    auto a = std::make_shared<HostfileArgs>();
    return {.add_options = [a](CLI::App& sub) { add_options(sub, *a); },
            .cluster = [a] { return a->cluster; },
            .action = [a](Invocation& inv) { return hostfile(inv, *a); }};
}

} // namespace ddl::cli
