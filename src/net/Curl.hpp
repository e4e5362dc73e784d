#pragma once
// HTTP and SMTP through libcurl. Every CURL* and curl_slist is owned by RAII; credentials travel only
// inside libcurl options, never in URLs that get logged.
#include "util/Result.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ddl {

struct HttpResponse {
    long status = 0;
    std::string body;
    std::map<std::string, std::string> headers; // names lower-cased; the last value of a repeated header
};

// One HTTP(S) request with everything explicit. Certificates and keys are paths: their material never
// passes through ddl's memory.
struct HttpRequest {
    std::string method = "GET"; // GET | POST | PUT | DELETE | ...
    std::string url;
    std::vector<std::string> headers; // "Name: value"; may carry tokens: never logged
    std::string body;                 // may carry passwords: never logged
    // The body's Content-Type when `headers` name none; empty: libcurl's own for a POST body
    // (application/x-www-form-urlencoded), which its SigV4 signing leaves out of the signed headers.
    std::string default_content_type = "application/json";
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};
    std::string ca_file;     // PEM bundle to verify the server with; empty: the system's
    bool verify = true;      // false only when the user's configuration says so (clouds.yaml verify: false)
    std::string client_cert; // PEM file: TLS client certificate (may also hold the key)
    std::string client_key;  // PEM file: its private key (empty: in client_cert)
    // AWS Signature Version 4, computed by libcurl (CURLOPT_AWS_SIGV4): "aws:amz:REGION:SERVICE" and the
    // key pair it signs with (never logged); empty: unsigned. libcurl signs the headers above too.
    std::string aws_sigv4;
    std::string aws_access_key_id, aws_secret_access_key;
    // What a failed TLS handshake or certificate check adds to the error: where to look.
    std::string tls_hint = "TLS: is the server's CA trusted, and the client certificate, if any, accepted?";
};

// The response, whatever its status; an Error only when no response came (DNS, TCP, TLS, timeout),
// naming the method, URL and libcurl's reason.
Result<HttpResponse> http_request(const HttpRequest& req);

// GETs `url` (http or https, redirects followed) into the file `path`, written as it arrives into
// `path`.part and renamed into place when complete; returns the bytes written. An Error when no response
// came or the status is not 2xx, naming the URL; `timeout` bounds the whole transfer.
Result<std::uint64_t> http_download(const std::string& url, const std::string& path,
                                    std::chrono::milliseconds timeout);

class HttpClient {
public:
    virtual ~HttpClient() = default;
    virtual Result<HttpResponse> post_json(const std::string& url, const std::string& body,
                                           std::chrono::milliseconds timeout) = 0;
    virtual Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers,
                                     std::chrono::milliseconds timeout) = 0;
    // Any request; an Error only when no HTTP response came (connection, TLS, timeout), naming the URL.
    virtual Result<HttpResponse> send(const HttpRequest& request) = 0;
};

class CurlHttpClient : public HttpClient {
public:
    Result<HttpResponse> post_json(const std::string& url, const std::string& body,
                                   std::chrono::milliseconds timeout) override;
    Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers,
                             std::chrono::milliseconds timeout) override;
    Result<HttpResponse> send(const HttpRequest& request) override;
};

struct SmtpSettings {
    std::string url; // smtp://host:port or smtps://host:port
    std::string from;
    std::string user;     // optional
    std::string password; // optional; never logged
    bool starttls = false;
};

struct MailMessage {
    std::vector<std::string> to;
    std::string subject;
    std::string body;
};

// Sends one plain-text mail; the Error carries libcurl's reason.
Status send_mail(const SmtpSettings& smtp, const MailMessage& msg, std::chrono::milliseconds timeout);
// The RFC 5322 text that send_mail transmits (exposed for tests).
std::string format_mail(const SmtpSettings& smtp, const MailMessage& msg, const std::string& date);

} // namespace ddl
