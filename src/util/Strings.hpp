#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddl {

std::vector<std::string> split(std::string_view text, char sep);
std::vector<std::string> split_lines(std::string_view text);
std::string trim(std::string_view text);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
std::string to_lower(std::string_view text);

// Edit distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Strict integer parse of the whole string (no sign unless allowed, no trailing junk).
std::optional<std::int64_t> parse_int(std::string_view text);
// A span as "90s", "30m", "12h" or "7d" in seconds (at most 100 years); nullopt when it is not one.
std::optional<long long> parse_duration_s(const std::string& text);

// Quote one argument for a POSIX shell (used only where a remote sshd needs a command line).
std::string shell_quote(std::string_view arg);
std::string shell_join(const std::vector<std::string>& argv);

bool is_valid_utf8(std::string_view text);
// Offset of the first byte that does not start a valid UTF-8 sequence.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);
// `text` safe to quote in a message, as UTF-8: letters of any script stay as they are; control characters,
// invalid bytes (\xNN) and the invisible ones that can reorder or hide text (bidirectional overrides,
// zero-width characters: \u{NNNN}) are escaped. At most `max_chars` characters ("..." ends a cut one).
std::string printable_utf8(std::string_view text, std::size_t max_chars);

} // namespace ddl
