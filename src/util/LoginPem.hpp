#pragma once
// The iLab.t / Fed4FIRE login file (PEM: the account's certificate and its private key), as GPULab's
// client-certificate login and jFed's `-p` take it: checked for both parts, never copied or logged.
#include "util/Result.hpp"

#include <ctime>
#include <string>

namespace ddl {

// Who the login file says its owner is: from its certificate (never the key), the first URI of
// subjectAltName that is a GENI URN (a user's preferred: "urn:publicid:IDN+<authority>+user+<name>"), the
// first e-mail address there, and the validity (as imec's gpulab-cli reads them: cert_processor.py).
struct LoginIdentity {
    std::string urn;
    std::string email;
    std::time_t not_before = 0;
    std::time_t not_after = 0;
};
// An Error names what is missing: no certificate, one that does not parse, no URN in subjectAltName.
Result<LoginIdentity> login_pem_identity(const std::string& path);

// OK when `path` is readable and holds a certificate and an unencrypted private key; otherwise an
// Error naming `what` (e.g. "the GPULab client certificate") and the fix.
Status check_login_pem(const std::string& path, const std::string& what);

} // namespace ddl
