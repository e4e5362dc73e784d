#pragma once
// How `ddl status`, `ddl list`, `ddl renew` and the launch warning show when a cluster's lease ends.
#include <chrono>
#include <optional>
#include <string>

namespace ddl::cli {

// "lease ends 2026-11-27T10:00:00Z (in 3h 59m)", "lease ended 2026-... (1h 2m ago)", or "no lease (the
// nodes stay until destroyed)".
std::string lease_text(std::optional<std::chrono::system_clock::time_point> end,
                       std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// "2026-11-27T18:00:00Z" (the form of the state's own times and of --output json).
std::string iso_utc(std::chrono::system_clock::time_point t);
// The time left as "11h 32m", "45m", "3d 2h"; "0m" when it has passed.
std::string time_left(std::chrono::system_clock::time_point end, std::chrono::system_clock::time_point now);

} // namespace ddl::cli
