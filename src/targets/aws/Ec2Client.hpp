#pragma once
// The few AWS API calls ddl's pre-flight makes, signed with Signature Version 4 by libcurl
// (CURLOPT_AWS_SIGV4 "aws:amz:REGION:SERVICE"; the session token, which curl does not know, as a signed
// X-Amz-Security-Token header): EC2's Query API (POST / with a form body, XML answers read with pugixml)
// and Service Quotas' JSON 1.1 API. Errors carry the API's own Code and Message.
#include "net/Curl.hpp"
#include "targets/aws/AwsCredentials.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddl {

// One signed POST. The seam tests replace (CurlAwsTransport sends it for real).
struct AwsRequest {
    std::string url;     // endpoint root; the request goes to "<url>/"
    std::string service; // SigV4 service name: ec2 | servicequotas
    std::vector<std::string> headers;
    std::string body;
};

class AwsTransport {
public:
    virtual ~AwsTransport() = default;
    // The response whatever its status; an Error only when none came (DNS, TCP, TLS, timeout).
    virtual Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials& creds) = 0;
};

class CurlAwsTransport : public AwsTransport {
public:
    explicit CurlAwsTransport(std::chrono::milliseconds timeout) : m_timeout(timeout) {}
    Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials& creds) override;

private:
    std::chrono::milliseconds m_timeout;
};

struct InstanceTypeInfo {
    int vcpus = 0;
    int gpus = 0;
    std::vector<std::string> usage_classes;        // on-demand, spot
    std::vector<std::string> placement_strategies; // cluster, partition, spread
};

struct ImageInfo {
    std::string id, name, state, architecture;
    int root_gb = 0;
};

class Ec2Client {
public:
    Ec2Client(AwsTransport& transport, AwsCredentials creds)
        : m_transport(transport), m_creds(std::move(creds)) {}

    // Which of `types` the region offers (DescribeInstanceTypeOfferings, LocationType=region).
    Result<std::vector<std::string>> offered_types(const std::vector<std::string>& types);
    // vCPUs, GPUs, usage classes and placement strategies of `types`, all offered in the region.
    Result<std::map<std::string, InstanceTypeInfo>> describe_types(const std::vector<std::string>& types);
    // The image `id`; nullopt when the region has no such image (InvalidAMIID.NotFound).
    Result<std::optional<ImageInfo>> describe_image(const std::string& id);
    // The applied value of an EC2 quota (GetServiceQuota, ServiceCode ec2); nullopt when the account has
    // none applied (NoSuchResourceException).
    Result<std::optional<double>> ec2_quota(const std::string& quota_code);

    const AwsCredentials& credentials() const { return m_creds; }

private:
    struct Reply {
        long status = 0;
        std::string code, message, body;
    };
    Result<Reply> ec2(const std::string& action,
                      const std::vector<std::pair<std::string, std::string>>& params);

    AwsTransport& m_transport;
    AwsCredentials m_creds;
};

// "Action=…&Version=…&k=v": names and values encoded as SigV4 wants (RFC 3986 unreserved kept).
std::string aws_form_body(const std::vector<std::pair<std::string, std::string>>& params);

} // namespace ddl
