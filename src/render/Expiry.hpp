#pragma once
// When a cluster's lifetime ends, as the form the targets record it in (the Terraform modules' `expires`
// variable: every resource's ddl-expires tag, the servers' ddl_expires metadata), so that `ddl gc --expired
// --spec` finds an expired cluster from the target's side even where its state folder is gone.
#include "spec/Spec.hpp"

#include <string>

namespace ddl {

// `created_at` (the state's "2026-11-27T12:00:00Z") plus the spec's lifetime, as "2026-11-28T00:00:00Z"
// (RFC 3339, UTC, whole seconds); empty without a lifetime. An empty or unreadable `created_at` (a cluster
// not created yet: `ddl plan`, `ddl render`) counts from `now_s` (seconds since the epoch).
std::string expiry_stamp(const Spec& spec, const std::string& created_at, long long now_s);

} // namespace ddl
