#pragma once
// Who the user is to the GENI federation, from the login PEM alone: the user URN in the certificate's
// subjectAltName ("urn:publicid:IDN+<authority>+user+<name>", GENI "Certificates"
// https://groups.geni.net/geni/wiki/GeniApiCertificates), whose authority (ilabt.imec.be, or the legacy
// wall2.ilabt.iminds.be) names the slice authority the user's projects and slices live under. GENI URNs
// (https://groups.geni.net/geni/wiki/GeniApiIdentifiers) and the RFC 3339 times the APIs exchange.
#include "util/Result.hpp"

#include <chrono>
#include <string>

namespace ddl {

struct GeniIdentity {
    std::string user_urn;  // urn:publicid:IDN+ilabt.imec.be+user+jdoe
    std::string authority; // ilabt.imec.be
    std::string user;      // jdoe
};

// Reads the certificate (never the key) of the login PEM at `path`. An Error says what is missing: no
// certificate, no URN in subjectAltName, a URN that is not a user's.
Result<GeniIdentity> geni_identity_from_pem(const std::string& path);
// Splits a user URN; an Error when it is not one.
Result<GeniIdentity> parse_user_urn(const std::string& urn);

// urn:publicid:IDN+AUTHORITY:PROJECT+slice+NAME (a slice in a project of the authority).
std::string geni_slice_urn(const std::string& authority, const std::string& project,
                           const std::string& slice);
// urn:publicid:IDN+AUTHORITY+project+PROJECT
std::string geni_project_urn(const std::string& authority, const std::string& project);

using TimePoint = std::chrono::system_clock::time_point;
// "2026-11-27T06:30:00Z" (UTC, whole seconds).
std::string format_rfc3339(TimePoint t);
// RFC 3339 / ISO 8601 times as aggregates write them: "2026-11-27T06:30:00Z", "...+01:00",
// "...T06:30:00.123Z", and XML-RPC's "20261127T06:30:00" (taken as UTC).
Result<TimePoint> parse_rfc3339(const std::string& text);

} // namespace ddl
