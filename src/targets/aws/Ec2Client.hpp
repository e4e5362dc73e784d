#pragma once
// The few AWS API calls ddl's pre-flight and `ddl gc --spec` make, signed with Signature Version 4 by libcurl
// (CURLOPT_AWS_SIGV4 "aws:amz:REGION:SERVICE"; the session token, which curl does not know, as a signed
// X-Amz-Security-Token header): EC2's Query API (POST / with a form body, XML answers read with pugixml)
// and Service Quotas' JSON 1.1 API. Errors carry the API's own Code and Message.
#include "net/Curl.hpp"
#include "targets/aws/AwsCredentials.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pugi {
class xml_node;
}

namespace ddl {

// One signed POST. The seam tests replace (HttpAwsTransport sends it for real).
struct AwsRequest {
    std::string url;                  // endpoint root; the request goes to "<url>/"
    std::string service;              // SigV4 service name: ec2 | servicequotas | iam
    std::vector<std::string> headers; // no Content-Type: the body is a form (EC2's Query API)
    std::string body;
    std::string
        region; // the SigV4 scope's region; empty: the credentials' (IAM's global endpoint: us-east-1)
};

class AwsTransport {
public:
    virtual ~AwsTransport() = default;
    // The response whatever its status; an Error only when none came (DNS, TCP, TLS, timeout).
    virtual Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials& creds) = 0;
};

// Sends through an HttpClient, signed there by libcurl (HttpRequest::aws_sigv4).
class HttpAwsTransport : public AwsTransport {
public:
    HttpAwsTransport(std::unique_ptr<HttpClient> http, std::chrono::milliseconds timeout)
        : m_http(std::move(http)), m_timeout(timeout) {}
    Result<HttpResponse> post(const AwsRequest& req, const AwsCredentials& creds) override;
    // What post() sends: region and service always named in the SigV4 setting (libcurl would otherwise
    // read them from the host name), the session token, which libcurl does not know, as a signed
    // X-Amz-Security-Token header (as the SDKs send it), AWS_CA_BUNDLE's CA file, and libcurl's form
    // Content-Type unless the headers name one.
    static HttpRequest signed_request(const AwsRequest& req, const AwsCredentials& creds,
                                      std::chrono::milliseconds timeout);

private:
    std::unique_ptr<HttpClient> m_http;
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

// One Filter.N of an EC2 Describe* call: any of `values` matches.
struct Ec2Filter {
    std::string name;
    std::vector<std::string> values;
};

// An instance as DescribeInstances lists it.
struct Ec2Instance {
    std::string id, state, launch_time; // state: instanceState/name; launch_time: ISO 8601, UTC
    std::map<std::string, std::string> tags;
    std::string instance_profile_arn; // iamInstanceProfile/arn; empty: none
};

// What the AWS module creates besides instances, in the order `ddl gc` deletes it.
enum class Ec2Kind { security_group, subnet, internet_gateway, route_table, vpc, key_pair, placement_group };

// An ingress rule of a security group that names another group (the part RevokeSecurityGroupIngress
// needs to take it out again).
struct Ec2GroupRule {
    std::string protocol, from_port, to_port, group_id;
};

// One resource of an Ec2Kind as its Describe* call lists it.
struct Ec2Object {
    std::string id;                         // sg-, subnet-, igw-, rtb-, vpc-, key-; a placement group's name
    std::string name;                       // the Name tag, else the resource's own name
    std::vector<std::string> attached_vpcs; // internet gateway: the VPCs it is attached to
    std::vector<Ec2GroupRule> group_rules;  // security group: its ingress rules naming a group
    bool main = false;                      // route table: the VPC's main one
};

// The answer to a change (TerminateInstances, Delete*, Detach*, Revoke*): done, already gone (the
// action's *.NotFound code), or refused with EC2's code and message (DependencyViolation, ...).
struct Ec2Change {
    bool done = false, gone = false;
    long status = 0;
    std::string code, message;
};

// The answer to one Query API request (EC2, IAM): its status and, where it was refused, the error's Code
// and Message ("HTTP <status>" as the code where the body names none).
struct AwsQueryReply {
    long status = 0;
    std::string code, message, body;
};

// One signed Query API POST: `req` names the endpoint, service and region (its body is made here from
// Action=`action`, Version=`version` and `params`); a refusal's Code and Message are read under
// `error_root` ("Response/Errors/Error" for EC2, "ErrorResponse/Error" for IAM). An Error, prefixed by
// `what` and the action, only when no answer came.
Result<AwsQueryReply> aws_query(AwsTransport& transport, const AwsCredentials& creds, AwsRequest req,
                                const std::string& what, const std::string& action,
                                const std::string& version,
                                const std::vector<std::pair<std::string, std::string>>& params,
                                const char* error_root);
// A change's reply as an Ec2Change; `gone`: whether the code says the thing no longer exists.
Ec2Change change_of(const AwsQueryReply& r, bool (*gone)(const std::string& code));

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

    // Every instance matching all `filters` (DescribeInstances, following NextToken).
    Result<std::vector<Ec2Instance>> describe_instances(const std::vector<Ec2Filter>& filters);
    // Every resource of `kind` matching all `filters` (DescribeSecurityGroups, DescribeSubnets, ...).
    Result<std::vector<Ec2Object>> describe(Ec2Kind kind, const std::vector<Ec2Filter>& filters);
    // One change; an Error only when no answer came.
    Result<Ec2Change> change(const std::string& action,
                             const std::vector<std::pair<std::string, std::string>>& params);

    const AwsCredentials& credentials() const { return m_creds; }

private:
    using Reply = AwsQueryReply;
    Result<Reply> ec2(const std::string& action,
                      const std::vector<std::pair<std::string, std::string>>& params);
    // Every page of Describe* `action` with `filters`, following nextToken; `page` reads each answer's
    // root element.
    Status describe_pages(const std::string& action, const std::vector<Ec2Filter>& filters,
                          const std::function<void(const pugi::xml_node&)>& page);

    AwsTransport& m_transport;
    AwsCredentials m_creds;
};

// Codes that say the resource (or the attachment) no longer exists: the Invalid*.NotFound family of
// "Error codes for the Amazon EC2 API", a placement group's InvalidPlacementGroup.Unknown and a detached
// gateway's Gateway.NotAttached.
bool ec2_means_gone(const std::string& code);
// "Action=…&Version=…&k=v": names and values percent-encoded as SigV4 wants (util/Url.hpp).
std::string aws_form_body(const std::vector<std::pair<std::string, std::string>>& params);

} // namespace ddl
