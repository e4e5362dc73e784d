#pragma once
#include "util/Result.hpp"

#include <string>

namespace ddl {

// Generates an ed25519 key pair at `private_path` (0600) and `private_path + ".pub"` (0644) unless the
// private key exists already; returns the public key line ("ssh-ed25519 AAAA... comment").
Result<std::string> ensure_keypair(const std::string& private_path, const std::string& comment);

// Checks that `text` is one OpenSSH public key line ("TYPE BASE64 [comment]", as in a .pub file or
// authorized_keys) whose key libssh can read, and returns it trimmed. A private key (PEM or OpenSSH
// "-----BEGIN") is refused with a message saying so; `what` names the input in messages.
Result<std::string> parse_openssh_public_key(const std::string& text, const std::string& what);

// Removes the pinned keys of `host` (an address or name, on `port`) from the known_hosts file at `path`
// (OpenSSH's format, as libssh writes it: "host" for port 22, "[host]:port" otherwise; comma-separated
// names in one line are each matched). For a machine that ddl itself removed: the next one at that address
// is a new machine with a new key. A missing file is no error.
Status forget_host_key(const std::string& path, const std::string& host, int port);

} // namespace ddl
