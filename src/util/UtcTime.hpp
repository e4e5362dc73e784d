#pragma once
// Times as ddl writes them everywhere (the state, the targets' records, --output json): RFC 3339 in UTC with
// whole seconds, "2026-11-27T18:00:00Z".
#include <ctime>
#include <optional>
#include <string>

namespace ddl {

// `t` (seconds since the epoch) as "2026-11-27T18:00:00Z".
std::string utc_text(std::time_t t);
// "2026-11-27T18:00:00Z" (what follows the seconds is not read) as seconds since the epoch; nullopt where
// it does not start with a date and time.
std::optional<std::time_t> utc_parse(const std::string& text);

} // namespace ddl
