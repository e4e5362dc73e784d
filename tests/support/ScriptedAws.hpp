#pragma once
// The AwsTarget of the AWS target's tests: every API call goes to one scripted transport, the environment
// is the given lookup, and no ~/.aws is read.
#include "targets/aws/AwsTarget.hpp"

#include <functional>
#include <memory>
#include <string>

namespace ddl::test {

inline AwsTarget scripted_aws_target(AwsTransport& to,
                                     std::function<std::string(const std::string&)> getenv) {
    struct Forward : AwsTransport {
        AwsTransport& to;
        explicit Forward(AwsTransport& t) : to(t) {}
        Result<HttpResponse> post(const AwsRequest& r, const AwsCredentials& c) override {
            return to.post(r, c);
        }
    };
    AwsCredentials::Sources src;
    src.getenv = std::move(getenv);
    src.home = "/nonexistent";
    return AwsTarget(
        AwsTarget::Deps{[&to](std::chrono::milliseconds) { return std::make_unique<Forward>(to); }, src});
}

} // namespace ddl::test
