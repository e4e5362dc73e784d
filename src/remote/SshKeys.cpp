#include "remote/SshKeys.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <libssh/libssh.h>
#include <memory>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace ddl {
namespace {
struct KeyDeleter {
    void operator()(ssh_key k) const { ssh_key_free(k); }
};
using KeyPtr = std::unique_ptr<std::remove_pointer_t<ssh_key>, KeyDeleter>;
} // namespace

Result<std::string> ensure_keypair(const std::string& private_path, const std::string& comment) {
    std::string pub_path = private_path + ".pub";
    if (path_exists(private_path) && path_exists(pub_path)) {
        auto pub = read_file(pub_path);
        if (!pub) return pub.error();
        return trim(*pub);
    }
    ssh_key raw = nullptr;
    if (ssh_pki_generate(SSH_KEYTYPE_ED25519, 0, &raw) != SSH_OK)
        return Error{"cannot generate an ed25519 key"};
    KeyPtr key(raw);
    // Export to a temp name, then rename: a crash never leaves a half-written key behind.
    std::string tmp = private_path + ".tmp";
    unlink(tmp.c_str());
    if (ssh_pki_export_privkey_file(key.get(), nullptr, nullptr, nullptr, tmp.c_str()) != SSH_OK)
        return Error{"cannot write the private key " + private_path};
    chmod(tmp.c_str(), 0600);
    char* b64 = nullptr;
    if (ssh_pki_export_pubkey_base64(key.get(), &b64) != SSH_OK) return Error{"cannot export the public key"};
    std::string line = std::string("ssh-ed25519 ") + b64 + " " + comment;
    ssh_string_free_char(b64);
    if (auto s = write_file_atomic(pub_path, line + "\n", 0644); !s) return s.error();
    if (rename(tmp.c_str(), private_path.c_str()) != 0) return errno_error("cannot store " + private_path);
    return line;
}

Result<std::string> parse_openssh_public_key(const std::string& text, const std::string& what) {
    std::string line = trim(text);
    if (line.find("PRIVATE KEY") != std::string::npos || starts_with(line, "-----BEGIN"))
        return Error{what + " holds a private key; give the public key (the .pub file beside it, or "
                            "`ssh-keygen -y -f KEY` prints it)"};
    if (line.empty()) return Error{what + " is empty; give an OpenSSH public key (ssh-ed25519 AAAA...)"};
    if (line.find('\n') != std::string::npos)
        return Error{what + " holds more than one line; give one OpenSSH public key"};
    std::vector<std::string> fields;
    std::istringstream words(line);
    for (std::string w; words >> w;)
        fields.push_back(w);
    if (fields.size() < 2)
        return Error{what + " is not an OpenSSH public key: expected \"TYPE BASE64 [comment]\", e.g. "
                            "\"ssh-ed25519 AAAA... you@host\""};
    ssh_keytypes_e type = ssh_key_type_from_name(fields[0].c_str());
    if (type == SSH_KEYTYPE_UNKNOWN)
        return Error{what + ": \"" + fields[0] +
                     "\" is not a key type OpenSSH knows (ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256, ...)"};
    ssh_key raw = nullptr;
    if (ssh_pki_import_pubkey_base64(fields[1].c_str(), type, &raw) != SSH_OK)
        return Error{what + ": the " + fields[0] +
                     " key data does not decode; copy the whole line of the .pub file"};
    KeyPtr key(raw);
    return line;
}

} // namespace ddl

namespace ddl {

Status forget_host_key(const std::string& path, const std::string& host, int port) {
    if (!path_exists(path)) return {};
    auto text = read_file(path);
    if (!text) return text.error();
    const std::string name = port == 22 ? host : "[" + host + "]:" + std::to_string(port);
    std::string kept;
    bool removed = false;
    for (const auto& line : split_lines(*text)) {
        const std::string hosts = line.substr(0, line.find(' '));
        bool match = false;
        for (const auto& h : split(hosts, ','))
            match = match || h == name;
        if (match) {
            removed = true;
            continue;
        }
        if (!line.empty()) kept += line + "\n";
    }
    if (!removed) return {};
    return write_file_atomic(path, kept, 0600);
}

} // namespace ddl
