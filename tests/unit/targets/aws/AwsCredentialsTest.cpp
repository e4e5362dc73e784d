// AWS credentials found as the AWS CLI finds them: a spec profile, then the environment's keys, then
// AWS_PROFILE / default from the shared files; endpoints from AWS_ENDPOINT_URL(_EC2).
#include "targets/aws/AwsCredentials.hpp"

#include "core/Log.hpp"
#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

namespace {

struct Rig {
    TempDir dir;
    std::map<std::string, std::string> env;
    AwsCredentials::Sources sources() {
        AwsCredentials::Sources s;
        s.getenv = [this](const std::string& k) { return env.count(k) ? env[k] : std::string(); };
        s.home = dir.path() + "/home";
        return s;
    }
    void write(const std::string& rel, const std::string& text) {
        REQUIRE(make_dirs(dir.path() + "/" + rel.substr(0, rel.rfind('/')), 0700).ok());
        REQUIRE(write_file_atomic(dir.path() + "/" + rel, text, 0600).ok());
    }
};

const char* k_credentials = R"(# the CLI's file
[default]
aws_access_key_id = AKIDDEFAULT000000001
aws_secret_access_key = default-secret-planted

[dev]
aws_access_key_id=AKIDDEV0000000000001
aws_secret_access_key=dev-secret-planted
aws_session_token = dev-token-planted
)";

const char* k_config = R"([default]
region = us-east-1

[profile ops]
aws_access_key_id = AKIDOPS0000000000001
aws_secret_access_key = ops-secret-planted
region = eu-west-1
s3 =
  max_concurrent_requests = 4

[ops2]
aws_access_key_id = AKIDNOTAPROFILE00001
aws_secret_access_key = never-used

[profile assumed]
role_arn = arn:aws:iam::123456789012:role/ddl
source_profile = default
)";

} // namespace

TEST_CASE("the shared files parse into sections and config sections keep their profile prefix") {
    auto f = parse_aws_shared_file(k_config);
    CHECK(f.count("default") == 1);
    CHECK(f["profile ops"]["aws_access_key_id"] == "AKIDOPS0000000000001");
    CHECK(f["profile ops"].count("max_concurrent_requests") == 0);
    CHECK(f["ops2"]["aws_secret_access_key"] == "never-used");
}

TEST_CASE("environment keys win over the default profile, with their session token") {
    Rig rig;
    rig.write("home/.aws/credentials", k_credentials);
    rig.env = {{"AWS_ACCESS_KEY_ID", "AKIDENV0000000000001"},
               {"AWS_SECRET_ACCESS_KEY", "env-secret-planted"},
               {"AWS_SESSION_TOKEN", "env-token-planted"}};
    auto c = AwsCredentials::resolve("", "eu-west-1", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->access_key_id == "AKIDENV0000000000001");
    CHECK(c->session_token == "env-token-planted");
    CHECK(c->profile.empty());
    CHECK(c->ec2_endpoint == "https://ec2.eu-west-1.amazonaws.com");
    CHECK(c->quotas_endpoint == "https://servicequotas.eu-west-1.amazonaws.com");
    auto env = c->terraform_env();
    CHECK(env["AWS_SECRET_ACCESS_KEY"] == "env-secret-planted");
    CHECK(env["AWS_REGION"] == "eu-west-1");
    // Secrets are redacted from every log line as soon as they are read.
    CHECK(log::redact("x env-secret-planted y env-token-planted") == "x *** y ***");
}

TEST_CASE("a profile named by the spec wins over environment keys, as the CLI's --profile does") {
    Rig rig;
    rig.write("home/.aws/credentials", k_credentials);
    rig.env = {{"AWS_ACCESS_KEY_ID", "AKIDENV0000000000001"},
               {"AWS_SECRET_ACCESS_KEY", "env-secret-planted"}};
    auto c = AwsCredentials::resolve("dev", "us-east-1", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->access_key_id == "AKIDDEV0000000000001");
    CHECK(c->session_token == "dev-token-planted");
    CHECK(c->source == rig.dir.path() + "/home/.aws/credentials [dev]");
    auto env = c->terraform_env();
    CHECK(env["AWS_PROFILE"] == "dev");
    CHECK(env.count("AWS_SECRET_ACCESS_KEY") == 0);
}

TEST_CASE("AWS_PROFILE reads the profile section of the config file and a bare section there is no profile") {
    Rig rig;
    rig.write("home/.aws/config", k_config);
    rig.env["AWS_PROFILE"] = "ops";
    auto c = AwsCredentials::resolve("", "eu-west-1", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->access_key_id == "AKIDOPS0000000000001");
    CHECK(c->source == rig.dir.path() + "/home/.aws/config [profile ops]");
    rig.env["AWS_PROFILE"] = "ops2";
    auto bad = AwsCredentials::resolve("", "eu-west-1", rig.sources());
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("AWS profile \"ops2\" (AWS_PROFILE) is in neither") == 0);
}

TEST_CASE("AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE replace the files under ~/.aws") {
    Rig rig;
    rig.write("elsewhere/creds", k_credentials);
    rig.env["AWS_SHARED_CREDENTIALS_FILE"] = rig.dir.path() + "/elsewhere/creds";
    rig.env["AWS_CONFIG_FILE"] = rig.dir.path() + "/elsewhere/config";
    auto c = AwsCredentials::resolve("", "us-east-1", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->access_key_id == "AKIDDEFAULT000000001");
    CHECK(c->terraform_env()["AWS_SHARED_CREDENTIALS_FILE"] == rig.dir.path() + "/elsewhere/creds");
}

TEST_CASE("no credentials anywhere, half a key pair, or a profile that assumes a role are reported") {
    Rig rig;
    auto none = AwsCredentials::resolve("", "us-east-1", rig.sources());
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.find("no AWS credentials found") == 0);
    rig.env["AWS_ACCESS_KEY_ID"] = "AKIDENV0000000000001";
    auto half = AwsCredentials::resolve("", "us-east-1", rig.sources());
    REQUIRE_FALSE(half.ok());
    CHECK(half.error().message.find("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not") == 0);
    rig.env.clear();
    rig.write("home/.aws/config", k_config);
    auto role = AwsCredentials::resolve("assumed", "us-east-1", rig.sources());
    REQUIRE(role.ok());
    CHECK(role->delegated_by == "role_arn");
}

TEST_CASE("AWS_ENDPOINT_URL_EC2 beats AWS_ENDPOINT_URL and AWS_IGNORE_CONFIGURED_ENDPOINT_URLS drops both") {
    Rig rig;
    rig.env = {{"AWS_ACCESS_KEY_ID", "AKIDENV0000000000001"},
               {"AWS_SECRET_ACCESS_KEY", "env-secret-planted"},
               {"AWS_ENDPOINT_URL", "https://127.0.0.1:9000/"},
               {"AWS_ENDPOINT_URL_EC2", "https://127.0.0.1:9001"},
               {"AWS_CA_BUNDLE", "/etc/ssl/test-ca.pem"}};
    auto c = AwsCredentials::resolve("", "us-east-1", rig.sources());
    REQUIRE(c.ok());
    CHECK(c->ec2_endpoint == "https://127.0.0.1:9001");
    CHECK(c->quotas_endpoint == "https://127.0.0.1:9000");
    CHECK(c->iam_endpoint == "https://127.0.0.1:9000");
    CHECK(c->ca_bundle == "/etc/ssl/test-ca.pem");
    CHECK(c->terraform_env()["AWS_CA_BUNDLE"] == "/etc/ssl/test-ca.pem");
    rig.env["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true";
    auto d = AwsCredentials::resolve("", "us-east-1", rig.sources());
    REQUIRE(d.ok());
    CHECK(d->ec2_endpoint == "https://ec2.us-east-1.amazonaws.com");
    CHECK(d->iam_endpoint == "https://iam.amazonaws.com");
}
