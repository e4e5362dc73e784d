#pragma once
// The Virtual Wall over the GENI APIs themselves (virtualwall.client: geni), no jFed: the user's identity
// and authority from the login PEM, the slice from the slice authority (Common Federation API v2), the
// nodes from the aggregate (AM API v3: Allocate -> Provision -> PerformOperationalAction geni_start ->
// Status until every sliver is geni_ready -> Describe for the manifest), Delete on destroy, Renew on
// `ddl renew`. What it created is recorded in the cluster's target_data so that destroy and renew reach
// the same slice whatever the spec says later.
#include "net/XmlRpcClient.hpp"
#include "provision/Context.hpp"
#include "targets/virtualwall/VirtualwallSection.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace ddl {

// The default AM API v3 URL of a testbed (wall1, wall2).
std::string virtualwall_default_am_url(const std::string& testbed);
// The default slice / member authority URL of an authority; empty where none is published
// (ilabt.imec.be: the spec must give sa_url and ma_url).
std::string virtualwall_default_sa_url(const std::string& authority);
std::string virtualwall_default_ma_url(const std::string& authority);

// Checks that need no network: the login PEM, its URN, the URLs, the public key for geni_users.
Status geni_preflight(const Context& ctx);
// Creates (or finds) the slice and its slivers and writes the manifest to `manifest_path`.
Status geni_provision(Context& ctx, XmlRpcTransport& transport, const std::string& manifest_path);
// Deletes the slivers of the slice ddl created (a slice or slivers already gone count as done).
Status geni_destroy(Context& ctx, XmlRpcTransport& transport);
// Extends the slice (at the SA first where its expiry is too early) and its slivers to now + `hours`.
Status geni_renew(Context& ctx, XmlRpcTransport& transport, std::chrono::hours hours);
// When the slice's slivers (or the slice) end, from what provision and renew recorded.
std::optional<std::chrono::system_clock::time_point> geni_lease_end(const nlohmann::json& target_data);

} // namespace ddl
