#include "net/Curl.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <curl/curl.h>
#include <memory>
#include <mutex>
#include <strings.h>

namespace ddl {
namespace {

struct CurlDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

void global_init() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t append(char* data, size_t size, size_t n, void* out) {
    static_cast<std::string*>(out)->append(data, size * n);
    return size * n;
}

struct Upload {
    const std::string* text;
    std::size_t pos = 0;
};

size_t read_upload(char* buf, size_t size, size_t n, void* ud) {
    auto* u = static_cast<Upload*>(ud);
    std::size_t left = u->text->size() - u->pos;
    std::size_t take = std::min(left, size * n);
    std::copy_n(u->text->data() + u->pos, take, buf);
    u->pos += take;
    return take;
}

Result<HttpResponse> perform(CURL* c, const std::string& url) {
    HttpResponse r;
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) return Error{url + ": " + curl_easy_strerror(rc)};
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
    return r;
}

size_t collect_header(char* data, size_t size, size_t n, void* out) {
    std::string line(data, size * n);
    auto colon = line.find(':');
    if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        std::string value = line.substr(colon + 1);
        auto b = value.find_first_not_of(" \t");
        auto e = value.find_last_not_of(" \t\r\n");
        (*static_cast<std::map<std::string, std::string>*>(out))[name] =
            b == std::string::npos ? "" : value.substr(b, e - b + 1);
    }
    return size * n;
}

struct FileCloser {
    void operator()(std::FILE* f) const { std::fclose(f); }
};

struct Sink {
    std::FILE* file;
    std::uint64_t bytes = 0;
};

size_t write_file(char* data, size_t size, size_t n, void* ud) {
    auto* sink = static_cast<Sink*>(ud);
    const size_t wrote = std::fwrite(data, 1, size * n, sink->file);
    sink->bytes += wrote;
    return wrote;
}

} // namespace

Result<std::uint64_t> http_download(const std::string& url, const std::string& path,
                                    std::chrono::milliseconds timeout) {
    global_init();
    CurlPtr c(curl_easy_init());
    if (!c) return Error{"cannot initialise libcurl"};
    const std::string part = path + ".part";
    Sink sink{nullptr};
    long status = 0;
    CURLcode rc = CURLE_OK;
    {
        std::unique_ptr<std::FILE, FileCloser> f(std::fopen(part.c_str(), "wb"));
        if (!f) return Error{"cannot write " + part};
        sink.file = f.get();
        curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
        curl_easy_setopt(c.get(), CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c.get(), CURLOPT_MAXREDIRS, 10L);
        curl_easy_setopt(c.get(), CURLOPT_FAILONERROR, 1L);
        curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
        curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, write_file);
        curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &sink);
        curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c.get(), CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
        rc = curl_easy_perform(c.get());
        curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &status);
        if (std::fflush(f.get()) != 0 && rc == CURLE_OK) rc = CURLE_WRITE_ERROR;
    }
    if (rc != CURLE_OK) {
        std::remove(part.c_str());
        if (rc == CURLE_HTTP_RETURNED_ERROR)
            return Error{"GET " + url + ": HTTP status " + std::to_string(status)};
        return Error{"GET " + url + ": " + curl_easy_strerror(rc)};
    }
    if (std::rename(part.c_str(), path.c_str()) != 0) return Error{"cannot rename " + part + " to " + path};
    return sink.bytes;
}

Result<HttpResponse> http_request(const HttpRequest& req) {
    global_init();
    CurlPtr c(curl_easy_init());
    if (!c) return Error{"cannot initialise libcurl"};
    curl_slist* raw = nullptr;
    bool has_type = false;
    for (const auto& h : req.headers) {
        raw = curl_slist_append(raw, h.c_str());
        has_type = has_type || (h.size() > 13 && strncasecmp(h.c_str(), "content-type:", 13) == 0);
    }
    const std::string type = "Content-Type: " + req.default_content_type;
    if (!req.body.empty() && !has_type && !req.default_content_type.empty())
        raw = curl_slist_append(raw, type.c_str());
    SlistPtr list(raw);
    HttpResponse r;
    curl_easy_setopt(c.get(), CURLOPT_URL, req.url.c_str());
    if (list) curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, list.get());
    if (req.method == "POST" || req.method == "PUT" || !req.body.empty()) {
        curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, req.body.c_str());
        curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(req.body.size()));
    }
    if (req.method != "GET" && req.method != "POST")
        curl_easy_setopt(c.get(), CURLOPT_CUSTOMREQUEST, req.method.c_str());
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(req.timeout.count()));
    if (!req.ca_file.empty()) curl_easy_setopt(c.get(), CURLOPT_CAINFO, req.ca_file.c_str());
    if (!req.client_cert.empty()) {
        curl_easy_setopt(c.get(), CURLOPT_SSLCERTTYPE, "PEM");
        curl_easy_setopt(c.get(), CURLOPT_SSLCERT, req.client_cert.c_str());
        curl_easy_setopt(c.get(), CURLOPT_SSLKEYTYPE, "PEM");
        curl_easy_setopt(c.get(), CURLOPT_SSLKEY,
                         (req.client_key.empty() ? req.client_cert : req.client_key).c_str());
    }
    if (!req.aws_sigv4.empty()) {
        curl_easy_setopt(c.get(), CURLOPT_AWS_SIGV4, req.aws_sigv4.c_str());
        curl_easy_setopt(c.get(), CURLOPT_USERNAME, req.aws_access_key_id.c_str());
        curl_easy_setopt(c.get(), CURLOPT_PASSWORD, req.aws_secret_access_key.c_str());
    }
    if (!req.verify) {
        curl_easy_setopt(c.get(), CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(c.get(), CURLOPT_SSL_VERIFYHOST, 0L);
    }
    curl_easy_setopt(c.get(), CURLOPT_HEADERFUNCTION, collect_header);
    curl_easy_setopt(c.get(), CURLOPT_HEADERDATA, &r.headers);
    curl_easy_setopt(c.get(), CURLOPT_WRITEFUNCTION, append);
    curl_easy_setopt(c.get(), CURLOPT_WRITEDATA, &r.body);
    curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "http,https");
    CURLcode rc = curl_easy_perform(c.get());
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(req.timeout.count()) / 1000.0);
        return Error{req.method + " " + req.url + ": no answer within " + secs + " s (timed out)"};
    }
    if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
        return Error{req.method + " " + req.url + ": " + curl_easy_strerror(rc) +
                     " (the server's certificate is not trusted: " +
                     (req.ca_file.empty() ? std::string("the system's CAs") : "CA file " + req.ca_file) +
                     " do not vouch for it; " + req.tls_hint + ")"};
    // A server that refuses the client certificate ends the connection in or right after the handshake
    // (TLS 1.3 sends its alert after the handshake: libcurl then says "Failure when receiving data from
    // the peer"): name the certificate it refused.
    if (rc == CURLE_SSL_CERTPROBLEM)
        return Error{req.method + " " + req.url + ": " + curl_easy_strerror(rc) +
                     " (could not use the client certificate " + req.client_cert +
                     ": is it a PEM with its matching, decrypted key?)"};
    if (!req.client_cert.empty() && r.headers.empty() &&
        (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR))
        return Error{
            req.method + " " + req.url + ": " + curl_easy_strerror(rc) +
            " (the server ended the TLS connection, as it does when it refuses the client certificate " +
            req.client_cert + ": expired, of another authority, or not your current login; " + req.tls_hint +
            ")"};
    if (rc == CURLE_SSL_CONNECT_ERROR)
        return Error{req.method + " " + req.url + ": " + curl_easy_strerror(rc) + " (" + req.tls_hint + ")"};
    if (rc != CURLE_OK) return Error{req.method + " " + req.url + ": " + curl_easy_strerror(rc)};
    curl_easy_getinfo(c.get(), CURLINFO_RESPONSE_CODE, &r.status);
    return r;
}

Result<HttpResponse> CurlHttpClient::send(const HttpRequest& req) {
    return http_request(req);
}

Result<HttpResponse> CurlHttpClient::post_json(const std::string& url, const std::string& body,
                                               std::chrono::milliseconds timeout) {
    global_init();
    CurlPtr c(curl_easy_init());
    if (!c) return Error{"cannot initialise libcurl"};
    SlistPtr headers(curl_slist_append(nullptr, "Content-Type: application/json"));
    curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
    curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c.get(), CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(c.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    return perform(c.get(), url);
}

Result<HttpResponse> CurlHttpClient::get(const std::string& url, const std::vector<std::string>& headers,
                                         std::chrono::milliseconds timeout) {
    global_init();
    CurlPtr c(curl_easy_init());
    if (!c) return Error{"cannot initialise libcurl"};
    curl_slist* raw = nullptr;
    for (const auto& h : headers)
        raw = curl_slist_append(raw, h.c_str());
    SlistPtr list(raw);
    curl_easy_setopt(c.get(), CURLOPT_URL, url.c_str());
    if (list) curl_easy_setopt(c.get(), CURLOPT_HTTPHEADER, list.get());
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    return perform(c.get(), url);
}

std::string format_mail(const SmtpSettings& smtp, const MailMessage& msg, const std::string& date) {
    std::string to;
    for (std::size_t i = 0; i < msg.to.size(); ++i)
        to += (i ? ", " : "") + msg.to[i];
    std::string text = "Date: " + date + "\r\nFrom: " + smtp.from + "\r\nTo: " + to +
                       "\r\nSubject: " + msg.subject +
                       "\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n";
    // Dot-stuffing and CRLF line ends, as SMTP's DATA phase requires.
    std::size_t start = 0;
    while (start <= msg.body.size()) {
        auto end = msg.body.find('\n', start);
        std::string line = msg.body.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line.front() == '.') line.insert(line.begin(), '.');
        text += line + "\r\n";
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return text;
}

Status send_mail(const SmtpSettings& smtp, const MailMessage& msg, std::chrono::milliseconds timeout) {
    global_init();
    if (smtp.url.empty()) return Error{"no SMTP server configured (set DDL_SMTP_URL)"};
    if (smtp.from.empty()) return Error{"no sender configured (set DDL_SMTP_FROM)"};
    CurlPtr c(curl_easy_init());
    if (!c) return Error{"cannot initialise libcurl"};
    char date[64];
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    std::string text = format_mail(smtp, msg, date);
    Upload up{&text};
    curl_slist* raw = nullptr;
    for (const auto& r : msg.to)
        raw = curl_slist_append(raw, ("<" + r + ">").c_str());
    SlistPtr rcpt(raw);
    curl_easy_setopt(c.get(), CURLOPT_URL, smtp.url.c_str());
    curl_easy_setopt(c.get(), CURLOPT_PROTOCOLS_STR, "smtp,smtps");
    curl_easy_setopt(c.get(), CURLOPT_MAIL_FROM, ("<" + smtp.from + ">").c_str());
    curl_easy_setopt(c.get(), CURLOPT_MAIL_RCPT, rcpt.get());
    curl_easy_setopt(c.get(), CURLOPT_READFUNCTION, read_upload);
    curl_easy_setopt(c.get(), CURLOPT_READDATA, &up);
    curl_easy_setopt(c.get(), CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c.get(), CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    if (smtp.starttls) curl_easy_setopt(c.get(), CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
    if (!smtp.user.empty()) {
        curl_easy_setopt(c.get(), CURLOPT_USERNAME, smtp.user.c_str());
        curl_easy_setopt(c.get(), CURLOPT_PASSWORD, smtp.password.c_str());
    }
    CURLcode rc = curl_easy_perform(c.get());
    if (rc != CURLE_OK)
        return Error{std::string("sending mail through ") + smtp.url + " failed: " + curl_easy_strerror(rc)};
    return {};
}

} // namespace ddl
