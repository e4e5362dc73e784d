// The node credential on OpenStack (autostop.node_credential; docs/security.md, "Nodes hold no cloud
// credential"): what the master's idle clock gets of the module's application credential
// (terraform/credential.tf), and what the controller reads back once the clock has ended the cluster.
//   Compute API (https://docs.openstack.org/api-ref/compute/): "Show Server Details" (status SHUTOFF, 404
//   once deleted; the server's metadata, where ddl_idle_openstack.py left ddl_autostop), "Delete Metadata
//   Item" (DELETE /servers/{server_id}/metadata/{key}: 204; 404 when the key or the server is not there).
#include "targets/openstack/OpenstackTarget.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

namespace ddl {
namespace {

// The cluster's server ids as the module's output server_ids lists them: the workers first, the master last.
Result<std::vector<std::string>> server_ids(const nlohmann::json& outputs) {
    const auto it = outputs.find("server_ids");
    if (it == outputs.end() || !it->is_array() || it->empty())
        return Error{"the OpenStack module has no output server_ids (src/targets/openstack/terraform/"
                     "credential.tf); the module in the cluster's folder is older than this ddl: run "
                     "`ddl deploy` again"};
    std::vector<std::string> ids;
    for (const auto& id : *it) {
        if (!id.is_string() || id.get<std::string>().empty())
            return Error{"the OpenStack module's output server_ids holds a value that is not a server id"};
        ids.push_back(id.get<std::string>());
    }
    return ids;
}

} // namespace

Result<std::optional<nlohmann::json>> OpenstackTarget::node_credential(Context& ctx,
                                                                       const nlohmann::json& outputs) {
    if (!ctx.spec.life.autostop.node_credential) return std::optional<nlohmann::json>{};
    const auto cred = outputs.find("node_credential");
    if (cred == outputs.end() || !cred->is_object() || !cred->contains("id") || !cred->contains("secret") ||
        !(*cred)["id"].is_string() || !(*cred)["secret"].is_string())
        return Error{"autostop.node_credential is set, but the OpenStack module's output node_credential "
                     "holds no application credential (id, secret); check that the module in the "
                     "cluster's folder is this ddl's (src/targets/openstack/terraform/credential.tf)"};
    const std::string id = (*cred)["id"].get<std::string>();
    const std::string secret = (*cred)["secret"].get<std::string>(); // a log secret: secret_keys below
    auto ids = server_ids(outputs);
    if (!ids) return ids.error();
    auto cloud = CloudConfig::load(ctx.spec.target_section<OpenstackSpec>().cloud, m_deps.sources);
    if (!cloud) return cloud.error();
    const CloudAuth& auth = cloud->auth;
    nlohmann::json env = {{"DDL_CLOUD", "openstack"},
                          {"OS_AUTH_TYPE", "v3applicationcredential"},
                          {"OS_AUTH_URL", auth.auth_url},
                          {"OS_APPLICATION_CREDENTIAL_ID", id},
                          {"OS_APPLICATION_CREDENTIAL_SECRET", secret},
                          {"OS_INTERFACE", auth.interface.empty() ? "public" : auth.interface},
                          {"DDL_CLOUD_SERVERS", join(*ids, ",")}};
    if (!auth.region_name.empty()) env["OS_REGION_NAME"] = auth.region_name;
    std::string ca_pem;
    if (!auth.cacert.empty()) {
        auto pem = read_file_limited(auth.cacert, 1 << 20);
        if (!pem)
            return Error{cloud->file + ": cacert " + auth.cacert +
                         " cannot be read for the master's idle clock (" + pem.error().message + ")"};
        ca_pem = *pem;
    }
    return std::optional<nlohmann::json>{nlohmann::json{
        {"env", env}, {"ca_pem", ca_pem}, {"secret_keys", {"OS_APPLICATION_CREDENTIAL_SECRET"}}}};
}

// Once every server is SHUTOFF or gone: the master's ddl_autostop metadata (what ddl_idle_openstack.py
// recorded), or, when the master is gone too (autostop.action destroy took its metadata with it), a line
// that says so. nullopt while any server runs, or without the node credential (then nothing on the cluster
// can end it but the controller).
Result<std::optional<std::string>> OpenstackTarget::autostop_end(Context& ctx) {
    const auto& autostop = ctx.spec.life.autostop;
    if (!autostop.node_credential) return std::optional<std::string>{};
    const auto& td = ctx.state.target_data;
    if (!td.contains("outputs") || !td["outputs"].is_object()) return std::optional<std::string>{};
    auto ids = server_ids(td["outputs"]);
    if (!ids) return std::optional<std::string>{}; // deployed before the credential existed
    auto cloud = connect(ctx.spec.target_section<OpenstackSpec>().cloud);
    if (!cloud) return cloud.error();
    std::optional<std::string> recorded;
    std::size_t gone = 0;
    for (const auto& id : *ids) {
        const std::string url = (*cloud)->nova + "/servers/" + id;
        auto r = (*cloud)->api->get(url);
        if (!r) return r.error();
        if (r->status == 404) {
            ++gone;
            continue;
        }
        if (r->status != 200 || !r->body.contains("server"))
            return Error{"GET " + url + " answered HTTP " + std::to_string(r->status) + " " +
                         api_error_message(r->body)};
        const auto& server = r->body["server"];
        if (server.value("status", "") != "SHUTOFF") return std::optional<std::string>{};
        if (id == ids->back() && server.contains("metadata") && server["metadata"].is_object())
            recorded = autostop_line(server["metadata"].value("ddl_autostop", ""));
    }
    if (recorded) return recorded;
    if (gone == ids->size() && autostop.action == "destroy")
        return std::optional<std::string>{
            "ddl-idle: autostop ends the allocation: every server of the cluster is gone (autostop.action "
            "destroy with the node credential; the master's ddl_autostop metadata went with it)"};
    return std::optional<std::string>{}; // stopped or deleted by someone else: not the idle clock's end
}

Status OpenstackTarget::set_power(Context& ctx, bool on) {
    const auto& td = ctx.state.target_data;
    if (on && ctx.spec.life.autostop.node_credential && td.contains("outputs") && td["outputs"].is_object()) {
        if (auto ids = server_ids(td["outputs"]); ids) {
            auto cloud = connect(ctx.spec.target_section<OpenstackSpec>().cloud);
            if (!cloud) return cloud.error();
            const std::string url = (*cloud)->nova + "/servers/" + ids->back() + "/metadata/ddl_autostop";
            auto r = (*cloud)->api->send("DELETE", url);
            if (!r) return r.error();
            if (r->status != 204 && r->status != 200 && r->status != 404)
                return Error{"DELETE " + url + " answered HTTP " + std::to_string(r->status) + " " +
                             api_error_message(r->body) +
                             " (the idle clock's record of its end on the master)"};
        }
    }
    return TerraformTarget::set_power(ctx, on);
}

} // namespace ddl
