#pragma once
// The deploy phases by identity; their names are what state.json records and `--only` takes.
#include <array>
#include <optional>
#include <string>

namespace ddl {

enum class PhaseId { render, provision, wait_ssh, configure, probe, hostfile };

inline constexpr std::array<PhaseId, 6> k_all_phases{PhaseId::render,   PhaseId::provision,
                                                     PhaseId::wait_ssh, PhaseId::configure,
                                                     PhaseId::probe,    PhaseId::hostfile};

inline const char* phase_name(PhaseId p) {
    switch (p) {
    case PhaseId::render:
        return "render";
    case PhaseId::provision:
        return "provision";
    case PhaseId::wait_ssh:
        return "wait-ssh";
    case PhaseId::configure:
        return "configure";
    case PhaseId::probe:
        return "probe";
    case PhaseId::hostfile:
        return "hostfile";
    }
    return "render";
}

inline std::optional<PhaseId> phase_from_name(const std::string& name) {
    for (auto p : k_all_phases)
        if (name == phase_name(p)) return p;
    return std::nullopt;
}

} // namespace ddl
