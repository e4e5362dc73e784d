#pragma once
// The SLICES `slices` CLI as ddl drives it for SLICES Basic Infrastructure (virtualwall.client: slices):
// the argv of each call and readers of its output. Pure: no process is run here.
// Sources (docs/targets.md has the table): the slices-cli package description
// (https://doc.slices-ri.eu/pypi/, slices_cli-2026.2.0b1 PKG-INFO), "Resource specification"
// (https://doc.slices-ri.eu/BasicServices/BasicInfrastructure/resource_spec.html) and, where SLICES
// publishes no reference, users' scripts that drive the CLI (third-party: behaviour, not a promise):
// `auth show` as the login check, `bi --infra SITE create NAME --experiment E --image I --flavor F
// --duration D --count N --wait --ssh-key-file K`, `bi list --experiment E --format json` (id,
// friendly_name, status, private_ipv4, public_ipv4, ssh_logins[{host, port, username, jump_proxy}],
// expires_at, failure_reason), `bi extend NAME --duration D`, `bi destroy NAME... --experiment E --force`.
#include "util/Result.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddl {

// One BI resource as `slices bi list --format json` shows it.
struct SlicesResource {
    std::string id;
    std::string name; // friendly_name
    std::string status;
    std::string private_ipv4;
    std::string public_ipv4;
    std::string user; // ssh_logins[0]
    std::string host;
    int port = 22;
    std::string jump; // ssh_logins[0].jump_proxy as user@host:port; empty: reached directly
    std::string created_at;
    std::string expires_at;
    std::string failure_reason;
};

// "3h", "2d", "1w", "90m" -> seconds; nullopt when it is not <number><m|h|d|w>.
std::optional<long long> slices_duration_seconds(const std::string& text);
// Whole hours as the CLI takes them ("48h").
std::string slices_duration_hours(long long hours);
// The longest lifetime SLICES BI gives a resource: 89 days ("89 is the maximum", the UGent guide to
// Basic Infrastructure).
constexpr long long k_slices_max_duration_s = 89LL * 24 * 3600;

// The resources of `slices bi list --format json` (a JSON array); an Error names what does not read.
Result<std::vector<SlicesResource>> parse_slices_resources(const std::string& json_text);
// Whether a listing the CLI prints as a table (`bi flavor list`, `bi diskimage list`) has a cell that is
// exactly `name` (cells split at the table's rules: │ ┃ | and runs of two or more spaces).
bool slices_listing_has(const std::string& listing, const std::string& name);

// argv of the calls (`cli`: the executable).
struct SlicesCreate {
    std::string site;
    std::string name;
    std::string experiment;
    std::string image;
    std::string flavor;
    std::string duration;
    int count = 1;
    std::string ssh_key_file;
};
std::vector<std::string> slices_bi_create_argv(const std::string& cli, const SlicesCreate& c);
std::vector<std::string> slices_bi_list_argv(const std::string& cli, const std::string& site,
                                             const std::string& experiment);
std::vector<std::string> slices_bi_destroy_argv(const std::string& cli, const std::string& site,
                                                const std::string& experiment,
                                                const std::vector<std::string>& names);
std::vector<std::string> slices_bi_extend_argv(const std::string& cli, const std::string& site,
                                               const std::string& experiment, const std::string& name,
                                               const std::string& duration);

} // namespace ddl
