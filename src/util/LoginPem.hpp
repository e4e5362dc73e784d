#pragma once
// The iLab.t / Fed4FIRE login file (PEM: the account's certificate and its private key), as GPULab's
// client-certificate login and jFed's `-p` take it: checked for both parts, never copied or logged.
#include "util/Result.hpp"

#include <string>

namespace ddl {

// OK when `path` is readable and holds a certificate and an unencrypted private key; otherwise an
// Error naming `what` (e.g. "the GPULab client certificate") and the fix.
Status check_login_pem(const std::string& path, const std::string& what);

} // namespace ddl
