#include "targets/virtualwall/SlicesCli.hpp"

#include "util/Strings.hpp"

#include <nlohmann/json.hpp>

namespace ddl {
namespace {

std::string slices_text(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_string()) return {};
    return j[key].get<std::string>();
}

// The group options go before the verb (`slices bi --infra SITE create ...`).
std::vector<std::string> bi_argv(const std::string& cli, const std::string& site) {
    std::vector<std::string> argv{cli, "bi"};
    if (!site.empty()) argv.insert(argv.end(), {"--infra", site});
    return argv;
}

} // namespace

std::optional<long long> slices_duration_seconds(const std::string& text) {
    // The CLI's units are m, h, d and w (no seconds); a lifetime is never zero.
    if (text.empty() || text.back() == 's') return std::nullopt;
    const bool weeks = text.back() == 'w';
    auto secs = parse_duration_s(weeks ? text.substr(0, text.size() - 1) + "d" : text);
    if (!secs || *secs <= 0) return std::nullopt;
    return weeks ? *secs * 7 : *secs;
}

std::string slices_duration_hours(long long hours) {
    return std::to_string(hours) + "h";
}

Result<std::vector<SlicesResource>> parse_slices_resources(const std::string& json_text) {
    auto j = nlohmann::json::parse(json_text, nullptr, false);
    if (j.is_discarded() || !j.is_array())
        return Error{"`slices bi list --format json` did not print a JSON array"};
    std::vector<SlicesResource> out;
    for (const auto& item : j) {
        if (!item.is_object()) return Error{"`slices bi list --format json`: an entry is not an object"};
        SlicesResource r;
        r.id = slices_text(item, "id");
        r.name = slices_text(item, "friendly_name");
        r.status = slices_text(item, "status");
        r.private_ipv4 = slices_text(item, "private_ipv4");
        r.public_ipv4 = slices_text(item, "public_ipv4");
        r.created_at = slices_text(item, "created_at");
        r.expires_at = slices_text(item, "expires_at");
        r.failure_reason = slices_text(item, "failure_reason");
        if (r.name.empty()) return Error{"`slices bi list --format json`: an entry has no friendly_name"};
        const auto logins = item.value("ssh_logins", nlohmann::json::array());
        if (logins.is_array() && !logins.empty() && logins[0].is_object()) {
            const auto& l = logins[0];
            r.host = slices_text(l, "host");
            r.user = slices_text(l, "username");
            if (l.contains("port") && l["port"].is_number_integer()) r.port = l["port"].get<int>();
            if (l.contains("jump_proxy") && l["jump_proxy"].is_object()) {
                const auto& p = l["jump_proxy"];
                int port = p.contains("port") && p["port"].is_number_integer() ? p["port"].get<int>() : 22;
                if (!slices_text(p, "host").empty())
                    r.jump = (slices_text(p, "username").empty() ? std::string()
                                                                 : slices_text(p, "username") + "@") +
                             slices_text(p, "host") + ":" + std::to_string(port);
            }
        }
        out.push_back(std::move(r));
    }
    return out;
}

bool slices_listing_has(const std::string& listing, const std::string& name) {
    if (name.empty()) return false;
    for (const auto& raw : split_lines(listing)) {
        // Table rules become separators; then cells are what runs of two or more spaces part.
        std::string line;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '|') {
                line += "  ";
            } else if (raw.compare(i, 3, "\u2502") == 0 || raw.compare(i, 3, "\u2503") == 0) {
                line += "  ";
                i += 2;
            } else {
                line += raw[i];
            }
        }
        std::size_t pos = 0;
        while (pos < line.size()) {
            auto gap = line.find("  ", pos);
            if (trim(line.substr(pos, gap == std::string::npos ? std::string::npos : gap - pos)) == name)
                return true;
            if (gap == std::string::npos) break;
            pos = gap + 2;
        }
    }
    return false;
}

std::vector<std::string> slices_bi_create_argv(const std::string& cli, const SlicesCreate& c) {
    auto argv = bi_argv(cli, c.site);
    argv.insert(argv.end(), {"create", c.name, "--experiment", c.experiment, "--image", c.image, "--flavor",
                             c.flavor, "--duration", c.duration, "--count", std::to_string(c.count), "--wait",
                             "--ssh-key-file", c.ssh_key_file});
    return argv;
}

std::vector<std::string> slices_bi_list_argv(const std::string& cli, const std::string& site,
                                             const std::string& experiment) {
    auto argv = bi_argv(cli, site);
    argv.insert(argv.end(), {"list", "--experiment", experiment, "--format", "json"});
    return argv;
}

std::vector<std::string> slices_bi_destroy_argv(const std::string& cli, const std::string& site,
                                                const std::string& experiment,
                                                const std::vector<std::string>& names) {
    auto argv = bi_argv(cli, site);
    argv.emplace_back("destroy");
    argv.insert(argv.end(), names.begin(), names.end());
    argv.insert(argv.end(), {"--experiment", experiment, "--force"});
    return argv;
}

std::vector<std::string> slices_bi_extend_argv(const std::string& cli, const std::string& site,
                                               const std::string& experiment, const std::string& name,
                                               const std::string& duration) {
    auto argv = bi_argv(cli, site);
    argv.insert(argv.end(), {"extend", name, "--experiment", experiment, "--duration", duration});
    return argv;
}

} // namespace ddl
