#pragma once
#include "util/Result.hpp"

#include <string>

namespace ddl {

// Generates an ed25519 key pair at `private_path` (0600) and `private_path + ".pub"` (0644) unless the
// private key exists already; returns the public key line ("ssh-ed25519 AAAA... comment").
Result<std::string> ensure_keypair(const std::string& private_path, const std::string& comment);

} // namespace ddl
