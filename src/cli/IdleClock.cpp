#include "cli/IdleClock.hpp"

#include "cli/Capabilities.hpp"
#include "cli/LeaseText.hpp"
#include "cli/OpenCluster.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

namespace ddl::cli {
namespace {

std::optional<time_point> time_field(const nlohmann::json& j, const char* key) {
    if (!j.contains(key) || !j[key].is_string()) return std::nullopt;
    return parse_iso_utc(j[key].get<std::string>());
}

std::vector<std::string> strings_field(const nlohmann::json& j, const char* key) {
    std::vector<std::string> out;
    if (!j.contains(key) || !j[key].is_array()) return out;
    for (const auto& v : j[key])
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
}

nlohmann::json time_or_null(const std::optional<time_point>& t) {
    return t ? nlohmann::json(iso_utc(*t)) : nlohmann::json(nullptr);
}

std::string span(long long s) {
    return time_left(time_point{} + std::chrono::seconds(s), time_point{});
}

} // namespace

Result<IdleRecord> parse_idle_record(const nlohmann::json& j) {
    if (!j.is_object() || !time_field(j, "checked_at"))
        return Error{"the idle clock's record is not one (no checked_at): " + j.dump().substr(0, 200)};
    IdleRecord r;
    r.checked_at = time_field(j, "checked_at");
    r.idle_since = time_field(j, "idle_since");
    r.busy = strings_field(j, "busy");
    r.unanswered = strings_field(j, "unanswered");
    if (j.contains("period_s") && j["period_s"].is_number_integer() && j["period_s"].get<int>() > 0)
        r.period_s = j["period_s"].get<int>();
    r.read_at = time_field(j, "read_at");
    if (j.contains("source") && j["source"].is_object()) r.source = j["source"];
    if (j.contains("ended") && j["ended"].is_object()) {
        const auto& e = j["ended"];
        r.ended_at = time_field(e, "at");
        r.ended_why = e.value("why", std::string());
        // ddl-idle's own record says how apart; the controller's keeps it in why.
        if (e.contains("how") && e["how"].is_string())
            r.ended_why += " (" + e["how"].get<std::string>() + ")";
        if (!r.ended_at) r.ended_at = r.checked_at;
    }
    return r;
}

nlohmann::json idle_json(const IdleRecord& r) {
    return {
        {"checked_at", time_or_null(r.checked_at)},
        {"idle_since", time_or_null(r.idle_since)},
        {"busy", r.busy},
        {"unanswered", r.unanswered},
        {"period_s", r.period_s},
        {"read_at", time_or_null(r.read_at)},
        {"source", r.source.is_object() ? r.source : nlohmann::json::object()},
        {"ended", r.ended_at
                      ? nlohmann::json{{"at", iso_utc(*r.ended_at)}, {"by", "autostop"}, {"why", r.ended_why}}
                      : nlohmann::json(nullptr)}};
}

nlohmann::json idle_json_at(const IdleRecord& r, time_point now) {
    auto j = idle_json(r);
    const auto s = idle_for_s(r, now);
    j["idle_s"] = s ? nlohmann::json(*s) : nlohmann::json(nullptr);
    return j;
}

Result<std::optional<IdleRecord>> read_idle_clock(Context& ctx, const std::string& dir, time_point now) {
    if (!check_nodes_over_ssh(ctx.spec, "the idle clock")) return last_idle_record(dir);
    const NodeState* m = master_of(ctx);
    if (!m || !ctx.state.phase_done("configure")) return std::optional<IdleRecord>{};
    auto r = ctx.remote.exec(ctx.endpoint(*m), shell_join({k_ddl_idle, "show"}), std::chrono::seconds(30));
    if (!r) return r.error();
    // 127: no clock on this master (namespace nodes share this machine's /opt/ddl only when it has one).
    if (r->exit_status == 127) return std::optional<IdleRecord>{};
    if (!r->ok()) return Error{"the idle clock on the master: " + trim(r->err)};
    nlohmann::json j = nlohmann::json::parse(r->out, nullptr, false);
    if (j.is_discarded()) return Error{"the idle clock on the master printed no JSON: " + trim(r->out)};
    if (j.is_null()) return std::optional<IdleRecord>{};
    auto rec = parse_idle_record(j);
    if (!rec) return rec.error();
    rec->read_at = now;
    // Kept for `ddl list`; a state folder that cannot take it only loses that view.
    (void)write_file_atomic(dir + "/idle.json", idle_json(*rec).dump(2) + "\n", 0600);
    return std::optional<IdleRecord>{*rec};
}

Result<std::optional<IdleRecord>> autostop_ended(Context& ctx, const std::string& dir, time_point now) {
    auto last = last_idle_record(dir);
    if (last && last->ended_at) return last;
    if (!ctx.spec.life.autostop.set() || !ctx.state.phase_done("provision"))
        return std::optional<IdleRecord>{};
    auto line = autostop_end(ctx);
    if (!line) return line.error();
    if (!*line) return std::optional<IdleRecord>{};
    IdleRecord r = last.value_or(IdleRecord{});
    if (!r.checked_at) r.checked_at = now;
    // "ddl-idle: autostop ends the allocation at <time>: <why>"
    const std::string& text = **line;
    const auto at = text.find(" at ");
    r.ended_at = at == std::string::npos ? std::nullopt : parse_iso_utc(text.substr(at + 4, 20));
    if (!r.ended_at) r.ended_at = now;
    r.ended_why = text;
    r.read_at = now;
    (void)write_file_atomic(dir + "/idle.json", idle_json(r).dump(2) + "\n", 0600);
    return std::optional<IdleRecord>{r};
}

std::optional<IdleRecord> last_idle_record(const std::string& dir) {
    auto text = read_file(dir + "/idle.json");
    if (!text) return std::nullopt;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    auto rec = parse_idle_record(j);
    if (!rec) return std::nullopt;
    return *rec;
}

std::optional<long long> idle_for_s(const IdleRecord& r, time_point now) {
    if (!r.idle_since || !r.checked_at) return std::nullopt;
    if (now - *r.checked_at > std::chrono::seconds(3LL * r.period_s)) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::seconds>(now - *r.idle_since).count();
}

std::string idle_text(const IdleRecord& r, const AutostopSpec& autostop, time_point now) {
    std::string out;
    if (r.ended_at) return "ended by autostop at " + iso_utc(*r.ended_at) + ": " + r.ended_why;
    if (r.checked_at && now - *r.checked_at > std::chrono::seconds(3LL * r.period_s))
        out = "idle clock silent since " + iso_utc(*r.checked_at) +
              " (is ddl-idle.timer running on the master?)";
    else if (auto idle = idle_for_s(r, now)) {
        out = "idle since " + iso_utc(*r.idle_since) + " (" + span(*idle) + ")";
        if (autostop.set()) {
            const long long left = autostop.idle_minutes * 60LL - *idle;
            out += left > 0
                       ? "; autostop " + autostop.action + "s it after " +
                             std::to_string(autostop.idle_minutes) + "m idle (in " + span(left) + ")"
                       : "; idle past autostop.idle_minutes (`ddl gc --expired` " + autostop.action + "s it)";
        }
    } else {
        out = "busy: " + (r.busy.empty() ? std::string("-") : join(r.busy, "; "));
    }
    if (!r.unanswered.empty()) out += " (not answering the clock: " + join(r.unanswered, "; ") + ")";
    return out;
}

} // namespace ddl::cli
