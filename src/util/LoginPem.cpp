#include "util/LoginPem.hpp"

#include "util/Files.hpp"

#include <memory>
#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

namespace ddl {
namespace {

std::string ia5_text(const ASN1_IA5STRING* s) {
    return {reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
            static_cast<std::size_t>(ASN1_STRING_length(s))};
}

std::time_t asn1_seconds(const ASN1_TIME* t) {
    std::tm tm{};
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return timegm(&tm);
}

} // namespace

Result<LoginIdentity> login_pem_identity(const std::string& path) {
    // Only the certificate block is handed to OpenSSL; the private key stays in the file.
    auto text = read_file_limited(path, std::size_t{1024} * 1024);
    if (!text) return Error{path + ": " + text.error().message};
    const std::string begin = "-----BEGIN CERTIFICATE-----";
    const std::string end = "-----END CERTIFICATE-----";
    auto b = text->find(begin);
    auto e = text->find(end, b == std::string::npos ? 0 : b);
    if (b == std::string::npos || e == std::string::npos) return Error{path + " holds no certificate"};
    const std::string cert = text->substr(b, e + end.size() - b) + "\n";
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(cert.data(), static_cast<int>(cert.size())),
                                                  BIO_free);
    if (!bio) return Error{"cannot read the certificate of " + path};
    std::unique_ptr<X509, decltype(&X509_free)> x509(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr),
                                                     X509_free);
    if (!x509) return Error{"the certificate in " + path + " cannot be parsed"};
    using Names = STACK_OF(GENERAL_NAME);
    std::unique_ptr<Names, void (*)(Names*)> names(
        static_cast<Names*>(X509_get_ext_d2i(x509.get(), NID_subject_alt_name, nullptr, nullptr)),
        [](Names* n) { GENERAL_NAMES_free(n); });
    LoginIdentity id;
    for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
        const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
        if (n->type == GEN_EMAIL && id.email.empty()) id.email = ia5_text(n->d.rfc822Name);
        if (n->type != GEN_URI) continue;
        std::string value = ia5_text(n->d.uniformResourceIdentifier);
        if (value.rfind("urn:publicid:IDN+", 0) == 0 &&
            (id.urn.empty() ||
             (id.urn.find("+user+") == std::string::npos && value.find("+user+") != std::string::npos)))
            id.urn = value;
    }
    if (id.urn.empty())
        return Error{"the certificate in " + path +
                     " has no GENI URN in its subjectAltName: use the login file your iLab.t account page "
                     "(or jFed) gives you"};
    id.not_before = asn1_seconds(X509_get0_notBefore(x509.get()));
    id.not_after = asn1_seconds(X509_get0_notAfter(x509.get()));
    return id;
}

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
