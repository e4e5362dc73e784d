#pragma once
// HTTP and SMTP through libcurl. Every CURL* and curl_slist is owned by RAII; credentials travel only
// inside libcurl options, never in URLs that get logged.
#include "util/Result.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace ddl {

struct HttpResponse {
    long status = 0;
    std::string body;
};

class HttpClient {
public:
    virtual ~HttpClient() = default;
    virtual Result<HttpResponse> post_json(const std::string& url, const std::string& body,
                                           std::chrono::milliseconds timeout) = 0;
    virtual Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers,
                                     std::chrono::milliseconds timeout) = 0;
};

class CurlHttpClient : public HttpClient {
public:
    Result<HttpResponse> post_json(const std::string& url, const std::string& body,
                                   std::chrono::milliseconds timeout) override;
    Result<HttpResponse> get(const std::string& url, const std::vector<std::string>& headers,
                             std::chrono::milliseconds timeout) override;
};

// One HTTP(S) request with everything explicit, for REST clients that need methods other than GET/POST
// and TLS client certificates. Paths only: certificate and key material never pass through ddl's memory.
struct HttpRequest {
    std::string method = "GET"; // GET | POST | PUT | DELETE
    std::string url;
    std::string body; // sent as application/json when not empty
    std::vector<std::string> headers;
    std::string client_cert; // PEM file: client certificate (may also hold the key)
    std::string client_key;  // PEM file: its private key (empty: in client_cert)
    std::string ca_bundle;   // PEM file of CAs to trust instead of the system's (empty: system)
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};
// The response, whatever its status; an Error only when no response came (DNS, TCP, TLS, timeout), with
// libcurl's reason.
Result<HttpResponse> http_request(const HttpRequest& req);

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
