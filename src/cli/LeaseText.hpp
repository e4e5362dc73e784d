#pragma once
// How `ddl status` and `ddl renew` show when a cluster's lease ends.
#include <chrono>
#include <optional>
#include <string>

namespace ddl::cli {

// "lease ends 2026-11-27T10:00:00Z (in 3h 59m)", "lease ended 2026-... (1h 2m ago)", or "no lease (the
// nodes stay until destroyed)".
std::string lease_text(std::optional<std::chrono::system_clock::time_point> end,
                       std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

} // namespace ddl::cli
