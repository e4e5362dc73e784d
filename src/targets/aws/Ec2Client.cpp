#include "targets/aws/Ec2Client.hpp"

#include "util/Strings.hpp"
#include "util/Url.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>

namespace ddl {
namespace {

constexpr const char* k_ec2_version = "2016-11-15";

// The text of a child element path such as "vCpuInfo/defaultVCpus" ("" when absent).
std::string text_at(const pugi::xml_node& n, const char* path) {
    return n.first_element_by_path(path).text().as_string();
}

std::vector<std::string> items(const pugi::xml_node& set) {
    std::vector<std::string> out;
    for (auto item : set.children("item"))
        out.emplace_back(item.text().as_string());
    return out;
}

Result<pugi::xml_document> parse_xml(const std::string& body, const std::string& what) {
    pugi::xml_document doc;
    if (!doc.load_buffer(body.data(), body.size()))
        return Error{what + ": the answer is not XML (is AWS_ENDPOINT_URL_EC2 an EC2 endpoint?)"};
    return doc;
}

} // namespace

bool ec2_means_gone(const std::string& code) {
    return ends_with(code, ".NotFound") || code == "InvalidPlacementGroup.Unknown" ||
           code == "Gateway.NotAttached";
}

std::string aws_form_body(const std::vector<std::pair<std::string, std::string>>& params) {
    std::string out;
    for (const auto& [k, v] : params) {
        if (!out.empty()) out += '&';
        out += percent_encode(k);
        out += '=';
        out += percent_encode(v);
    }
    return out;
}

HttpRequest HttpAwsTransport::signed_request(const AwsRequest& req, const AwsCredentials& creds,
                                             std::chrono::milliseconds timeout) {
    HttpRequest r;
    r.method = "POST";
    r.url = req.url + "/";
    r.headers = req.headers;
    if (!creds.session_token.empty()) r.headers.push_back("X-Amz-Security-Token: " + creds.session_token);
    r.body = req.body;
    r.default_content_type.clear(); // the Query API's form type, as libcurl sends a POST body
    r.timeout = timeout;
    r.ca_file = creds.ca_bundle;
    r.aws_sigv4 = "aws:amz:" + (req.region.empty() ? creds.region : req.region) + ":" + req.service;
    r.aws_access_key_id = creds.access_key_id;
    r.aws_secret_access_key = creds.secret_access_key;
    r.tls_hint = "is the endpoint's CA trusted? AWS_CA_BUNDLE names a CA file";
    return r;
}

Result<HttpResponse> HttpAwsTransport::post(const AwsRequest& req, const AwsCredentials& creds) {
    return m_http->send(signed_request(req, creds, m_timeout));
}

Result<AwsQueryReply> aws_query(AwsTransport& transport, const AwsCredentials& creds, AwsRequest req,
                                const std::string& what, const std::string& action,
                                const std::string& version,
                                const std::vector<std::pair<std::string, std::string>>& params,
                                const char* error_root) {
    std::vector<std::pair<std::string, std::string>> all{{"Action", action}, {"Version", version}};
    all.insert(all.end(), params.begin(), params.end());
    req.body = aws_form_body(all);
    auto r = transport.post(req, creds);
    if (!r) return Error{what + " " + action + ": " + r.error().message};
    AwsQueryReply out{r->status, "", "", r->body};
    if (r->status == 200) return out;
    pugi::xml_document doc;
    if (doc.load_buffer(r->body.data(), r->body.size())) {
        auto error = doc.first_element_by_path(error_root);
        out.code = error.child("Code").text().as_string();
        out.message = error.child("Message").text().as_string();
    }
    if (out.code.empty()) out.code = "HTTP " + std::to_string(r->status);
    return out;
}

Ec2Change change_of(const AwsQueryReply& r, bool (*gone)(const std::string& code)) {
    Ec2Change c;
    c.status = r.status;
    c.code = r.code;
    c.message = r.message;
    c.done = r.status == 200;
    c.gone = !c.done && gone(r.code);
    return c;
}

Result<Ec2Client::Reply> Ec2Client::ec2(const std::string& action,
                                        const std::vector<std::pair<std::string, std::string>>& params) {
    return aws_query(m_transport, m_creds, AwsRequest{m_creds.ec2_endpoint, "ec2", {}, {}}, "EC2", action,
                     k_ec2_version, params, "Response/Errors/Error");
}

namespace {

Error api_error(const std::string& what, const std::string& code, const std::string& message, long status) {
    std::string msg = what + " failed: " + code;
    if (!message.empty()) msg += ": " + message;
    msg += " (HTTP " + std::to_string(status) + ")";
    if (code == "AuthFailure" || code == "SignatureDoesNotMatch" || code == "UnrecognizedClientException" ||
        code == "InvalidSignatureException" || code == "InvalidClientTokenId")
        msg += "; check the access key and secret (AWS_ACCESS_KEY_ID, aws.profile, ~/.aws/credentials)";
    else if (code == "UnauthorizedOperation" || code == "AccessDeniedException")
        msg += "; the credentials' IAM policy must allow it (or deploy with --skip-preflight)";
    else if (code == "RequestExpired")
        msg += "; this machine's clock is more than 15 minutes off";
    return Error{msg};
}

} // namespace

Result<std::vector<std::string>> Ec2Client::offered_types(const std::vector<std::string>& types) {
    std::vector<std::string> out;
    std::string token;
    do {
        std::vector<std::pair<std::string, std::string>> p{{"LocationType", "region"},
                                                           {"Filter.1.Name", "instance-type"}};
        for (std::size_t i = 0; i < types.size(); ++i)
            p.emplace_back("Filter.1.Value." + std::to_string(i + 1), types[i]);
        if (!token.empty()) p.emplace_back("NextToken", token);
        auto r = ec2("DescribeInstanceTypeOfferings", p);
        if (!r) return r.error();
        if (r->status != 200)
            return api_error("EC2 DescribeInstanceTypeOfferings", r->code, r->message, r->status);
        auto doc = parse_xml(r->body, "EC2 DescribeInstanceTypeOfferings");
        if (!doc) return doc.error();
        auto root = doc->document_element();
        for (auto item : root.child("instanceTypeOfferingSet").children("item"))
            out.emplace_back(item.child("instanceType").text().as_string());
        token = root.child("nextToken").text().as_string();
    } while (!token.empty());
    return out;
}

Result<std::map<std::string, InstanceTypeInfo>>
Ec2Client::describe_types(const std::vector<std::string>& types) {
    std::vector<std::pair<std::string, std::string>> p;
    for (std::size_t i = 0; i < types.size(); ++i)
        p.emplace_back("InstanceType." + std::to_string(i + 1), types[i]);
    auto r = ec2("DescribeInstanceTypes", p);
    if (!r) return r.error();
    if (r->status != 200) return api_error("EC2 DescribeInstanceTypes", r->code, r->message, r->status);
    auto doc = parse_xml(r->body, "EC2 DescribeInstanceTypes");
    if (!doc) return doc.error();
    std::map<std::string, InstanceTypeInfo> out;
    for (auto item : doc->document_element().child("instanceTypeSet").children("item")) {
        InstanceTypeInfo info;
        info.vcpus = item.first_element_by_path("vCpuInfo/defaultVCpus").text().as_int();
        for (auto g : item.first_element_by_path("gpuInfo/gpus").children("item"))
            info.gpus += g.child("count").text().as_int();
        info.usage_classes = items(item.child("supportedUsageClasses"));
        info.placement_strategies =
            items(item.first_element_by_path("placementGroupInfo/supportedStrategies"));
        out[item.child("instanceType").text().as_string()] = info;
    }
    return out;
}

Result<std::optional<ImageInfo>> Ec2Client::describe_image(const std::string& id) {
    auto r = ec2("DescribeImages", {{"ImageId.1", id}});
    if (!r) return r.error();
    if (r->code == "InvalidAMIID.NotFound") return std::optional<ImageInfo>{};
    if (r->status != 200) return api_error("EC2 DescribeImages", r->code, r->message, r->status);
    auto doc = parse_xml(r->body, "EC2 DescribeImages");
    if (!doc) return doc.error();
    auto item = doc->document_element().child("imagesSet").child("item");
    if (!item) return std::optional<ImageInfo>{};
    ImageInfo info{text_at(item, "imageId"), text_at(item, "name"), text_at(item, "imageState"),
                   text_at(item, "architecture"), 0};
    std::string root = text_at(item, "rootDeviceName");
    for (auto m : item.child("blockDeviceMapping").children("item"))
        if (root == m.child("deviceName").text().as_string())
            info.root_gb = m.first_element_by_path("ebs/volumeSize").text().as_int();
    return std::optional<ImageInfo>{info};
}

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

void add_filters(Params& p, const std::vector<Ec2Filter>& filters) {
    for (std::size_t i = 0; i < filters.size(); ++i) {
        const std::string f = "Filter." + std::to_string(i + 1);
        p.emplace_back(f + ".Name", filters[i].name);
        for (std::size_t j = 0; j < filters[i].values.size(); ++j)
            p.emplace_back(f + ".Value." + std::to_string(j + 1), filters[i].values[j]);
    }
}

std::map<std::string, std::string> tags_of(const pugi::xml_node& n) {
    std::map<std::string, std::string> out;
    for (auto t : n.child("tagSet").children("item"))
        out[t.child("key").text().as_string()] = t.child("value").text().as_string();
    return out;
}

// How each kind is listed: the action, the set element of its answer and the id and name elements of
// each item (API Reference, "Response Elements" of each Describe* action).
struct KindInfo {
    const char* action;
    const char* set;
    const char* id;
    const char* name;
};

KindInfo kind_info(Ec2Kind kind) {
    switch (kind) {
    case Ec2Kind::security_group:
        return {"DescribeSecurityGroups", "securityGroupInfo", "groupId", "groupName"};
    case Ec2Kind::subnet:
        return {"DescribeSubnets", "subnetSet", "subnetId", ""};
    case Ec2Kind::internet_gateway:
        return {"DescribeInternetGateways", "internetGatewaySet", "internetGatewayId", ""};
    case Ec2Kind::route_table:
        return {"DescribeRouteTables", "routeTableSet", "routeTableId", ""};
    case Ec2Kind::vpc:
        return {"DescribeVpcs", "vpcSet", "vpcId", ""};
    case Ec2Kind::key_pair:
        return {"DescribeKeyPairs", "keySet", "keyPairId", "keyName"};
    case Ec2Kind::placement_group:
        return {"DescribePlacementGroups", "placementGroupSet", "groupName", "groupName"};
    }
    return {"", "", "", ""};
}

constexpr int k_max_pages = 100;

} // namespace

Status Ec2Client::describe_pages(const std::string& action, const std::vector<Ec2Filter>& filters,
                                 const std::function<void(const pugi::xml_node&)>& page) {
    const std::string what = "EC2 " + action;
    std::string token;
    for (int n = 0; n < k_max_pages; ++n) {
        Params p;
        add_filters(p, filters);
        if (!token.empty()) p.emplace_back("NextToken", token);
        auto r = ec2(action, p);
        if (!r) return r.error();
        if (r->status != 200) return api_error(what, r->code, r->message, r->status);
        auto doc = parse_xml(r->body, what);
        if (!doc) return doc.error();
        auto root = doc->document_element();
        page(root);
        token = root.child("nextToken").text().as_string();
        if (token.empty()) return {};
    }
    return Error{what + ": still a nextToken after " + std::to_string(k_max_pages) + " pages"};
}

Result<std::vector<Ec2Instance>> Ec2Client::describe_instances(const std::vector<Ec2Filter>& filters) {
    std::vector<Ec2Instance> out;
    auto st = describe_pages("DescribeInstances", filters, [&out](const pugi::xml_node& root) {
        for (auto reservation : root.child("reservationSet").children("item"))
            for (auto i : reservation.child("instancesSet").children("item"))
                out.push_back({text_at(i, "instanceId"), text_at(i, "instanceState/name"),
                               text_at(i, "launchTime"), tags_of(i), text_at(i, "iamInstanceProfile/arn")});
    });
    if (!st) return st.error();
    return out;
}

Result<std::vector<Ec2Object>> Ec2Client::describe(Ec2Kind kind, const std::vector<Ec2Filter>& filters) {
    const KindInfo k = kind_info(kind);
    std::vector<Ec2Object> out;
    auto st = describe_pages(k.action, filters, [&out, &k](const pugi::xml_node& root) {
        for (auto item : root.child(k.set).children("item")) {
            Ec2Object o;
            o.id = text_at(item, k.id);
            auto tags = tags_of(item);
            o.name = tags.count("Name") ? tags["Name"] : (*k.name ? text_at(item, k.name) : std::string());
            for (auto a : item.child("attachmentSet").children("item"))
                o.attached_vpcs.emplace_back(a.child("vpcId").text().as_string());
            for (auto a : item.child("associationSet").children("item"))
                o.main = o.main || a.child("main").text().as_bool();
            for (auto perm : item.child("ipPermissions").children("item"))
                for (auto g : perm.child("groups").children("item"))
                    o.group_rules.push_back({text_at(perm, "ipProtocol"), text_at(perm, "fromPort"),
                                             text_at(perm, "toPort"), text_at(g, "groupId")});
            out.push_back(std::move(o));
        }
    });
    if (!st) return st.error();
    return out;
}

Result<Ec2Change> Ec2Client::change(const std::string& action, const Params& params) {
    auto r = ec2(action, params);
    if (!r) return r.error();
    return change_of(*r, ec2_means_gone);
}

Result<std::optional<double>> Ec2Client::ec2_quota(const std::string& quota_code) {
    AwsRequest req{
        m_creds.quotas_endpoint,
        "servicequotas",
        {"Content-Type: application/x-amz-json-1.1", "X-Amz-Target: ServiceQuotasV20190624.GetServiceQuota"},
        nlohmann::json{{"ServiceCode", "ec2"}, {"QuotaCode", quota_code}}.dump()};
    const std::string what = "Service Quotas GetServiceQuota " + quota_code;
    auto r = m_transport.post(req, m_creds);
    if (!r) return Error{what + ": " + r.error().message};
    auto body = nlohmann::json::parse(r->body, nullptr, false);
    if (r->status != 200) {
        // botocore's rule: the code is __type after any '#' and before any ':'.
        std::string code, message;
        if (body.is_object()) {
            code = body.value("__type", "");
            if (auto h = code.find('#'); h != std::string::npos) code = code.substr(h + 1);
            if (auto c = code.find(':'); c != std::string::npos) code = code.substr(0, c);
            message = body.value("message", body.value("Message", ""));
        }
        if (code == "NoSuchResourceException") return std::optional<double>{};
        return api_error(what, code.empty() ? "HTTP " + std::to_string(r->status) : code, message, r->status);
    }
    if (!body.is_object() || !body.contains("Quota") || !body["Quota"].is_object() ||
        !body["Quota"].contains("Value") || !body["Quota"]["Value"].is_number())
        return Error{what + ": the answer has no Quota.Value"};
    return std::optional<double>{body["Quota"]["Value"].get<double>()};
}

} // namespace ddl
