#include "remote/SshKeys.hpp"

#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdio>
#include <libssh/libssh.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

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

} // namespace ddl
