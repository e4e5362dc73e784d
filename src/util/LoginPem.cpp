#include "util/LoginPem.hpp"

#include "util/Files.hpp"

namespace ddl {

Status check_login_pem(const std::string& path, const std::string& what) {
    auto text = read_file_limited(path, std::size_t{1024} * 1024);
    if (!text) return Error{what + " " + path + " cannot be read: " + text.error().message};
    // Only the markers are looked at; the key itself is never copied anywhere or logged.
    const bool has_cert = text->find("-----BEGIN CERTIFICATE-----") != std::string::npos;
    const bool has_key = text->find("PRIVATE KEY-----") != std::string::npos;
    if (!has_cert || !has_key)
        return Error{what + " " + path +
                     " must hold both the certificate and its private key (PEM); it has " +
                     (has_cert ? "no private key" : "no certificate")};
    if (text->find("ENCRYPTED") != std::string::npos)
        return Error{"the private key in " + path +
                     " is encrypted; ddl needs a decrypted copy (e.g. `openssl rsa -in " + path +
                     "`) kept with mode 0600"};
    return {};
}

} // namespace ddl
