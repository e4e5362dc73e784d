#include "targets/virtualwall/VirtualwallGeni.hpp"

#include "render/Expiry.hpp"
#include "targets/virtualwall/GeniClient.hpp"
#include "targets/virtualwall/GeniIdentity.hpp"
#include "targets/virtualwall/RequestRspec.hpp"
#include "util/Files.hpp"
#include "util/LoginPem.hpp"
#include "util/Strings.hpp"
#include "util/UtcTime.hpp"

#include <algorithm>
#include <ctime>
#include <thread>

namespace ddl {
namespace {

// How long the slivers may take from geni_start to geni_ready (bare-metal nodes boot and load their
// image: minutes; jFed's own default wait is 30 minutes).
constexpr auto k_ready_timeout = std::chrono::minutes(45);

struct Session {
    GeniIdentity id;
    GeniEndpoints endpoints;
    std::string slice_name;
    std::string slice_urn;
    std::string project_urn;
};

XmlRpcEndpoint endpoint(const std::string& url, const std::string& pem, const std::string& ca) {
    return XmlRpcEndpoint{.url = url, .login_pem = pem, .ca_file = ca, .timeout = std::chrono::minutes(5)};
}

// From the spec (provision), or from what provision recorded (destroy, renew: the same slice whatever
// the spec says now).
Result<Session> make_session(const Context& ctx, bool from_state) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    const auto& td = ctx.state.target_data;
    auto pick = [&](const char* key, const std::string& spec_value) {
        return from_state ? td.value(key, spec_value) : spec_value;
    };
    const std::string pem = pick("login_pem", vw.login_pem);
    auto id = geni_identity_from_pem(pem);
    if (!id) return Error{"virtualwall.login_pem: " + id.error().message};
    Session s;
    s.id = *id;
    s.slice_name = pick("slice", vw.slice_name(ctx.spec.name));
    const std::string project = pick("project", vw.project);
    s.slice_urn = pick("slice_urn", geni_slice_urn(id->authority, project, s.slice_name));
    s.project_urn = geni_project_urn(id->authority, project);
    const std::string ca = pick("ca_file", vw.ca_file);
    const std::string am =
        pick("am_url", vw.am_url.empty() ? virtualwall_default_am_url(vw.testbed) : vw.am_url);
    const std::string sa =
        pick("sa_url", vw.sa_url.empty() ? virtualwall_default_sa_url(id->authority) : vw.sa_url);
    const std::string ma =
        pick("ma_url", vw.ma_url.empty() ? virtualwall_default_ma_url(id->authority) : vw.ma_url);
    if (sa.empty() || ma.empty())
        return Error{"your login certificate is of authority " + id->authority +
                     ", whose slice and member authority URLs ddl does not know (none is published): set "
                     "virtualwall.sa_url and virtualwall.ma_url (jFed shows them for your authority)"};
    s.endpoints = GeniEndpoints{endpoint(ma, pem, ca), endpoint(sa, pem, ca), endpoint(am, pem, ca)};
    return s;
}

XmlRpcValue creds_of(const XmlRpcValue& slice_cred) {
    return XmlRpcValue::array({slice_cred});
}
XmlRpcValue urns_of(const Session& s) {
    return XmlRpcValue::array({XmlRpcValue::string(s.slice_urn)});
}

struct Sliver {
    std::string urn;
    std::string allocation;
    std::string operational;
    std::string expires;
    std::string error;
};

std::vector<Sliver> slivers_of(const XmlRpcValue& value) {
    // Status and Describe return {geni_urn, geni_slivers: [...]}; Provision, Renew and POA a list.
    const XmlRpcValue* list = value.is(XmlRpcValue::Kind::array) ? &value : value.get("geni_slivers");
    std::vector<Sliver> out;
    if (!list) return out;
    for (const auto& s : list->items())
        out.push_back({s.text("geni_sliver_urn"), s.text("geni_allocation_status"),
                       s.text("geni_operational_status"), s.text("geni_expires"), s.text("geni_error")});
    return out;
}

// The earliest geni_expires of the slivers (RFC 3339), or empty.
std::string earliest_expiry(const std::vector<Sliver>& slivers) {
    std::optional<TimePoint> first;
    std::string text;
    for (const auto& s : slivers) {
        auto t = parse_rfc3339(s.expires);
        if (t && (!first || *t < *first)) {
            first = *t;
            text = format_rfc3339(*t);
        }
    }
    return text;
}

bool all_in(const std::vector<Sliver>& slivers, std::string Sliver::*field, const std::string& state) {
    return !slivers.empty() &&
           std::all_of(slivers.begin(), slivers.end(), [&](const Sliver& s) { return s.*field == state; });
}
bool any_in(const std::vector<Sliver>& slivers, std::string Sliver::*field, const std::string& state) {
    return std::any_of(slivers.begin(), slivers.end(), [&](const Sliver& s) { return s.*field == state; });
}

struct Creds {
    XmlRpcValue user;
    std::optional<SliceRecord> slice;
};

Result<Creds> user_and_slice(GeniClient& client, const Session& s) {
    auto user = client.user_credential(s.id.user_urn);
    if (!user) return user.error();
    auto rec = client.lookup_slice(s.slice_urn, *user);
    if (!rec) return rec.error();
    return Creds{*user, *rec};
}

// Status until every sliver is geni_ready (or one failed, or k_ready_timeout passed): the slivers then.
Result<std::vector<Sliver>> wait_until_ready(Context& ctx, GeniClient& client, const Session& s,
                                             const XmlRpcValue& cr) {
    const auto deadline = std::chrono::steady_clock::now() + k_ready_timeout;
    auto pause = std::chrono::seconds(1);
    ctx.progress.note("    aggregate: waiting until every sliver is geni_ready");
    int failed_polls = 0;
    for (;;) {
        auto st = client.am("Status", {urns_of(s), cr, XmlRpcValue::structure()});
        if (!st) {
            // One failed poll (a dropped connection, a busy aggregate) is not the slivers failing: tried
            // again after a growing pause, three times in a row at most.
            if (++failed_polls > 3 || ctx.stop_requested()) return st.error();
            ctx.progress.note("    aggregate: Status failed (" + st.error().message + "); trying again");
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::seconds(20));
            continue;
        }
        failed_polls = 0;
        std::vector<Sliver> slivers = slivers_of(*st);
        for (const auto& sl : slivers)
            if (sl.operational == "geni_failed")
                return Error{
                    "aggregate: sliver " + sl.urn + " failed (geni_failed)" +
                    (sl.error.empty() ? std::string() : ": " + sl.error) +
                    "; `ddl destroy` the cluster and deploy again, or ask for another hardware_type"};
        if (all_in(slivers, &Sliver::operational, "geni_ready")) return slivers;
        if (std::chrono::steady_clock::now() > deadline) {
            std::vector<std::string> waiting;
            for (const auto& sl : slivers)
                if (sl.operational != "geni_ready") waiting.push_back(sl.urn + " " + sl.operational);
            return Error{
                "aggregate: slivers not geni_ready after " +
                std::to_string(std::chrono::duration_cast<std::chrono::minutes>(k_ready_timeout).count()) +
                " minutes (" + join(waiting, ", ") +
                "); deploy again to keep waiting, or `ddl destroy` the cluster"};
        }
        if (ctx.stop_requested()) return Error{"interrupted while waiting for the slivers"};
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::seconds(20));
    }
}

// The slice's manifest from Describe, written to `path` (0600).
Status save_manifest(GeniClient& client, const Session& s, const XmlRpcValue& cr, const std::string& path) {
    auto d = client.am(
        "Describe",
        {urns_of(s), cr, XmlRpcValue::structure({{"geni_rspec_version", geni_rspec_version_option()}})});
    if (!d) return d.error();
    const std::string manifest = d->text("geni_rspec");
    if (manifest.empty()) return Error{"aggregate Describe returned no manifest (geni_rspec)"};
    return write_file_atomic(path, manifest, 0600);
}

} // namespace

std::string virtualwall_default_am_url(const std::string& testbed) {
    return "https://www." + testbed + ".ilabt.iminds.be:12369/protogeni/xmlrpc/am/3.0";
}

std::string virtualwall_default_sa_url(const std::string& authority) {
    if (authority == "wall2.ilabt.iminds.be")
        return "https://www.wall2.ilabt.iminds.be:12369/protogeni/xmlrpc/geni-sa/2";
    return {};
}

std::string virtualwall_default_ma_url(const std::string& authority) {
    if (authority == "wall2.ilabt.iminds.be")
        return "https://www.wall2.ilabt.iminds.be:12369/protogeni/xmlrpc/geni-ma";
    return {};
}

Status geni_preflight(const Context& ctx) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    if (vw.login_pem.empty())
        return Error{"virtualwall.login_pem is not set: ddl creates the slice over the GENI AM API with your "
                     "iLab.t login file (certificate and decrypted key), or pass the manifest the jFed GUI "
                     "saved with `ddl deploy " +
                     ctx.spec.source_file + " --manifest FILE`"};
    if (auto s = check_login_pem(vw.login_pem, "virtualwall.login_pem: the login file"); !s) return s;
    if (auto s = make_session(ctx, false); !s) return s.error();
    if (!vw.ca_file.empty() && !path_exists(vw.ca_file))
        return Error{"virtualwall.ca_file " + vw.ca_file + " does not exist"};
    if (ctx.spec.access.private_key.empty())
        return Error{"the aggregate installs the public key of access.private_key on the nodes: set "
                     "access.private_key"};
    if (!path_exists(ctx.spec.access.private_key + ".pub"))
        return Error{"access.private_key: " + ctx.spec.access.private_key +
                     ".pub is missing; the aggregate installs that public key on the nodes (make it with "
                     "`ssh-keygen -y -f " +
                     ctx.spec.access.private_key + " > " + ctx.spec.access.private_key + ".pub`)"};
    return {};
}

Status geni_provision(Context& ctx, XmlRpcTransport& transport, const std::string& manifest_path) {
    const auto& vw = ctx.spec.target_section<VirtualwallSpec>();
    auto s = make_session(ctx, false);
    if (!s) return s.error();
    auto& td = ctx.state.target_data;
    td["client"] = "geni";
    td["slice_urn"] = s->slice_urn;
    td["login_pem"] = vw.login_pem;
    td["ca_file"] = vw.ca_file;
    td["am_url"] = s->endpoints.am.url;
    td["sa_url"] = s->endpoints.sa.url;
    td["ma_url"] = s->endpoints.ma.url;
    td["user_urn"] = s->id.user_urn;
    if (auto st = ctx.save(); !st) return st;

    GeniClient client(transport, s->endpoints);
    auto creds = user_and_slice(client, *s);
    if (!creds) return creds.error();
    if (!creds->slice) {
        auto until = std::chrono::system_clock::now() + std::chrono::hours(vw.expiry_hours);
        // The spec's lifetime, where it ends first, is the slice's expiration: the testbed ends the slice
        // itself then, whether or not `ddl gc --expired` runs.
        if (auto end = utc_parse(expiry_stamp(ctx.spec, ctx.state.created_at, std::time(nullptr))))
            until = std::min(until, std::chrono::system_clock::from_time_t(*end));
        // A slice without slivers costs nothing and a slice authority deletes no slices: what destroy must
        // find is recorded before Allocate, not here.
        auto made = client.create_slice(s->slice_name, s->project_urn, format_rfc3339(until), creds->user);
        if (!made) return made.error();
        ctx.progress.note("    slice authority: created slice " + made->urn + " (expires " +
                          made->expiration + ")");
        creds->slice = *made;
    } else {
        ctx.progress.note("    slice authority: slice " + s->slice_urn + " exists (expires " +
                          creds->slice->expiration + ")");
    }
    td["slice_expires"] = creds->slice->expiration;
    if (auto st = ctx.save(); !st) return st;
    auto slice_cred = client.slice_credential(s->slice_urn, creds->user);
    if (!slice_cred) return slice_cred.error();
    if (auto st = client.am_get_version(); !st) return st;
    const XmlRpcValue cr = creds_of(*slice_cred);

    // Where the slivers are: none yet (SEARCHFAILED), allocated, provisioned, started.
    GeniFailure failure;
    std::vector<Sliver> slivers;
    if (auto st = client.am("Status", {urns_of(*s), cr, XmlRpcValue::structure()}, &failure))
        slivers = slivers_of(*st);
    else if (failure.code != geni_code::k_searchfailed)
        return st.error();
    const bool none_yet = slivers.empty() || all_in(slivers, &Sliver::allocation, "geni_unallocated");
    if (!none_yet && !td.value("slice_requested", false))
        return Error{
            "slice " + s->slice_urn +
            " already has slivers at this aggregate that ddl did not create (jFed, another machine): "
            "delete them in jFed first, or set virtualwall.slice to another name; ddl leaves them alone"};
    if (none_yet) {
        // Recorded first: from here on slivers may exist and destroy must delete them.
        td["slice_requested"] = true;
        if (auto st = ctx.save(); !st) return st;
        auto rspec = read_file(ctx.cluster_dir() + "/rendered/virtualwall/request.rspec");
        if (!rspec) return rspec.error();
        ctx.progress.note("    aggregate: Allocate (" + std::to_string(rspec_nodes(ctx.spec).size()) +
                          " nodes)");
        auto a = client.am("Allocate", {XmlRpcValue::string(s->slice_urn), cr, XmlRpcValue::string(*rspec),
                                        XmlRpcValue::structure()});
        if (!a) return a.error();
        slivers = slivers_of(*a);
    }
    if (any_in(slivers, &Sliver::allocation, "geni_allocated")) {
        auto pub = read_file(ctx.spec.access.private_key + ".pub");
        if (!pub) return pub.error();
        auto users = XmlRpcValue::array(
            {XmlRpcValue::structure({{"urn", XmlRpcValue::string(s->id.user_urn)},
                                     {"keys", XmlRpcValue::array({XmlRpcValue::string(trim(*pub))})}})});
        ctx.progress.note("    aggregate: Provision");
        auto p = client.am("Provision",
                           {urns_of(*s), cr,
                            XmlRpcValue::structure({{"geni_rspec_version", geni_rspec_version_option()},
                                                    {"geni_users", users}})});
        if (!p) return p.error();
        slivers = slivers_of(*p);
    }
    if (any_in(slivers, &Sliver::operational, "geni_notready")) {
        ctx.progress.note("    aggregate: PerformOperationalAction geni_start");
        auto p = client.am("PerformOperationalAction",
                           {urns_of(*s), cr, XmlRpcValue::string("geni_start"), XmlRpcValue::structure()});
        if (!p) return p.error();
    }

    // Status until every sliver is geni_ready.
    auto ready = wait_until_ready(ctx, client, *s, cr);
    if (!ready) return ready.error();
    slivers = std::move(*ready);
    td["slivers_expire"] = earliest_expiry(slivers);
    if (auto st = save_manifest(client, *s, cr, manifest_path); !st) return st;
    td["slice_created"] = true;
    ctx.progress.note("    aggregate: slice " + s->slice_urn + " ready; slivers expire " +
                      td.value("slivers_expire", std::string("(not given)")));
    return ctx.save();
}

Status geni_destroy(Context& ctx, XmlRpcTransport& transport) {
    auto s = make_session(ctx, true);
    if (!s) return s.error();
    GeniClient client(transport, s->endpoints);
    auto creds = user_and_slice(client, *s);
    if (!creds) return creds.error();
    if (!creds->slice) {
        ctx.progress.note("    slice authority: slice " + s->slice_urn +
                          " is gone (expired); nothing to delete");
        return {};
    }
    auto slice_cred = client.slice_credential(s->slice_urn, creds->user);
    if (!slice_cred) return slice_cred.error();
    GeniFailure failure;
    auto d = client.am("Delete", {urns_of(*s), creds_of(*slice_cred), XmlRpcValue::structure()}, &failure);
    if (!d && failure.code != geni_code::k_searchfailed && failure.code != geni_code::k_expired)
        return d.error();
    ctx.progress.note(d ? "    aggregate: slivers of " + s->slice_urn + " deleted"
                        : "    aggregate: slice " + s->slice_urn + " has no slivers left");
    return {};
}

Status geni_renew(Context& ctx, XmlRpcTransport& transport, std::chrono::hours hours) {
    auto& td = ctx.state.target_data;
    if (td.value("client", std::string()) != "geni" || !td.value("slice_created", false))
        return Error{
            "ddl did not create this cluster's slice over the GENI API, so it cannot renew it: renew "
            "slice " +
            td.value("slice", ctx.spec.name) + " in jFed"};
    auto s = make_session(ctx, true);
    if (!s) return s.error();
    GeniClient client(transport, s->endpoints);
    auto creds = user_and_slice(client, *s);
    if (!creds) return creds.error();
    if (!creds->slice)
        return Error{"slice authority: slice " + s->slice_urn +
                     " is gone (expired): `ddl destroy` the cluster and deploy again"};
    const auto want = std::chrono::system_clock::now() + hours;
    const std::string want_text = format_rfc3339(want);
    auto slice_end = parse_rfc3339(creds->slice->expiration);
    if (!slice_end || *slice_end < want) {
        // The slivers cannot outlive the slice: the SA's expiry first, with the slice's credential (the
        // reference slice authority, ProtoGENI's GeniStdSA, refuses a user credential for `update`:
        // "Insufficient privilege"; omni's renew_slice passes the slice credential too).
        auto current = client.slice_credential(s->slice_urn, creds->user);
        if (!current) return current.error();
        if (auto st = client.update_slice_expiration(s->slice_urn, want_text, *current); !st) return st;
        ctx.progress.note("    slice authority: slice expiry set to " + want_text);
        auto again = client.lookup_slice(s->slice_urn, creds->user);
        if (!again) return again.error();
        if (*again) creds->slice = **again;
    }
    td["slice_expires"] = creds->slice->expiration;
    // A new slice credential: the old one expires with the old slice expiry.
    auto slice_cred = client.slice_credential(s->slice_urn, creds->user);
    if (!slice_cred) return slice_cred.error();
    auto r = client.am("Renew", {urns_of(*s), creds_of(*slice_cred), XmlRpcValue::string(want_text),
                                 XmlRpcValue::structure()});
    if (!r) return r.error();
    const std::string sliver_end = earliest_expiry(slivers_of(*r));
    td["slivers_expire"] = sliver_end.empty() ? want_text : sliver_end;
    ctx.progress.note("    aggregate: slivers renewed until " + td.value("slivers_expire", want_text));
    return ctx.save();
}

std::optional<std::chrono::system_clock::time_point> geni_lease_end(const nlohmann::json& td) {
    std::optional<TimePoint> end;
    for (const char* key : {"slivers_expire", "slice_expires"}) {
        auto t = parse_rfc3339(td.value(key, std::string()));
        if (t && (!end || *t < *end)) end = *t;
    }
    return end;
}

} // namespace ddl
