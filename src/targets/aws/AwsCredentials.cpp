#include "targets/aws/AwsCredentials.hpp"

#include "core/Log.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <filesystem>

namespace ddl {
namespace {

using Section = std::map<std::string, std::string>;
using IniFile = std::map<std::string, Section>;

std::string lower(std::string s) {
    for (auto& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

std::string absolute(const std::string& path) {
    if (path.empty()) return path;
    std::error_code ec;
    auto p = std::filesystem::absolute(path, ec);
    return ec ? path : p.string();
}

std::string without_slash(std::string s) {
    while (!s.empty() && s.back() == '/')
        s.pop_back();
    return s;
}

// The section of `profile` in the config file: [profile NAME], or [default] for "default".
const Section* config_section(const IniFile& config, const std::string& profile) {
    if (auto it = config.find("profile " + profile); it != config.end()) return &it->second;
    if (profile == "default")
        if (auto it = config.find("default"); it != config.end()) return &it->second;
    return nullptr;
}

// Fills the keys of `profile` from the shared files into `out`; an Error when the profile is nowhere.
Status from_profile(const std::string& profile, const IniFile& creds, const IniFile& config,
                    AwsCredentials& out, const std::string& chosen_by) {
    out.profile = profile;
    const Section* c = nullptr;
    if (auto it = creds.find(profile); it != creds.end()) c = &it->second;
    const Section* k = config_section(config, profile);
    if (!c && !k)
        return Error{"AWS profile \"" + profile + "\" (" + chosen_by + ") is in neither " +
                     out.credentials_file + " ([" + profile + "]) nor " + out.config_file + " ([profile " +
                     profile + "]); write it with `aws configure --profile " + profile +
                     "` or name another profile"};
    for (const Section* s : {c, k}) {
        if (!s || !out.access_key_id.empty()) continue;
        auto id = s->find("aws_access_key_id");
        auto secret = s->find("aws_secret_access_key");
        if (id == s->end() || secret == s->end()) continue;
        out.access_key_id = id->second;
        out.secret_access_key = secret->second;
        if (auto t = s->find("aws_session_token"); t != s->end()) out.session_token = t->second;
        out.source = (s == c ? out.credentials_file + " [" + profile + "]"
                             : out.config_file + " [" +
                                   (profile == "default" ? "default" : "profile " + profile) + "]");
    }
    if (!out.access_key_id.empty()) return {};
    for (const Section* s : {c, k}) {
        if (!s) continue;
        for (const char* key :
             {"role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"})
            if (s->count(key)) {
                out.delegated_by = key;
                out.source = "profile " + profile + " (" + key + ")";
                return {};
            }
    }
    return Error{"AWS profile \"" + profile + "\" has no aws_access_key_id and aws_secret_access_key (in " +
                 out.credentials_file + " or " + out.config_file +
                 "); add them with `aws configure --profile " + profile + "`"};
}

} // namespace

IniFile parse_aws_shared_file(const std::string& text) {
    IniFile out;
    std::string section;
    bool in_section = false;
    for (const auto& raw : split(text, '\n')) {
        std::string line = trim(raw);
        if (line.empty() || line[0] == '#' || line[0] == ';') continue;
        if (line.front() == '[' && line.back() == ']') {
            // "[profile  dev]" and "[ dev ]" name the same profiles as the CLI reads them.
            std::string name = trim(line.substr(1, line.size() - 2));
            if (starts_with(name, "profile ")) name = "profile " + trim(name.substr(8));
            section = name;
            in_section = true;
            out[section];
            continue;
        }
        auto eq = line.find('=');
        // Continuation lines (nested "s3 =" settings) and stray text carry nothing ddl reads.
        if (!in_section || eq == std::string::npos || raw.empty() || raw[0] == ' ' || raw[0] == '\t')
            continue;
        out[section][lower(trim(line.substr(0, eq)))] = trim(line.substr(eq + 1));
    }
    return out;
}

AwsCredentials::Sources AwsCredentials::system_sources() {
    Sources s;
    s.getenv = [](const std::string& name) {
        const char* v = std::getenv(name.c_str());
        return std::string(v ? v : "");
    };
    const char* home = std::getenv("HOME");
    s.home = home ? home : "";
    return s;
}

Result<AwsCredentials> AwsCredentials::resolve(const std::string& spec_profile, const std::string& region,
                                               const Sources& src) {
    AwsCredentials out;
    out.region = region;
    out.credentials_file = src.getenv("AWS_SHARED_CREDENTIALS_FILE");
    if (out.credentials_file.empty()) out.credentials_file = src.home + "/.aws/credentials";
    out.config_file = src.getenv("AWS_CONFIG_FILE");
    if (out.config_file.empty()) out.config_file = src.home + "/.aws/config";
    out.credentials_file = absolute(out.credentials_file);
    out.config_file = absolute(out.config_file);
    auto load = [](const std::string& path) {
        auto text = read_file(path);
        return text ? parse_aws_shared_file(*text) : IniFile{};
    };

    std::string env_id = src.getenv("AWS_ACCESS_KEY_ID"), env_secret = src.getenv("AWS_SECRET_ACCESS_KEY");
    Status found;
    if (!spec_profile.empty()) {
        found =
            from_profile(spec_profile, load(out.credentials_file), load(out.config_file), out, "aws.profile");
    } else if (!env_id.empty() || !env_secret.empty()) {
        if (env_id.empty() || env_secret.empty())
            return Error{std::string(env_id.empty() ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID") +
                         " is set but " + (env_id.empty() ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY") +
                         " is not; set both, or unset it to use a profile of ~/.aws"};
        out.access_key_id = env_id;
        out.secret_access_key = env_secret;
        out.session_token = src.getenv("AWS_SESSION_TOKEN");
        if (out.session_token.empty()) out.session_token = src.getenv("AWS_SECURITY_TOKEN");
        out.source = "environment (AWS_ACCESS_KEY_ID)";
    } else {
        std::string profile = src.getenv("AWS_PROFILE"), by = "AWS_PROFILE";
        if (profile.empty()) profile = src.getenv("AWS_DEFAULT_PROFILE"), by = "AWS_DEFAULT_PROFILE";
        if (profile.empty()) {
            profile = "default";
            auto creds = load(out.credentials_file), config = load(out.config_file);
            if (!creds.count("default") && !config_section(config, "default"))
                return Error{"no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
                             "write " +
                             out.credentials_file + " (`aws configure`), or name a profile (aws.profile)"};
            found = from_profile(profile, creds, config, out, "the default");
        } else {
            found = from_profile(profile, load(out.credentials_file), load(out.config_file), out, by);
        }
    }
    if (!found) return found.error();
    log::register_secret(out.secret_access_key);
    log::register_secret(out.session_token);

    bool ignore = lower(src.getenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")) == "true";
    std::string global = ignore ? "" : src.getenv("AWS_ENDPOINT_URL");
    std::string ec2 = ignore ? "" : src.getenv("AWS_ENDPOINT_URL_EC2");
    std::string quotas = ignore ? "" : src.getenv("AWS_ENDPOINT_URL_SERVICE_QUOTAS");
    std::string iam = ignore ? "" : src.getenv("AWS_ENDPOINT_URL_IAM");
    out.ec2_endpoint = without_slash(!ec2.empty()      ? ec2
                                     : !global.empty() ? global
                                                       : "https://ec2." + region + ".amazonaws.com");
    out.quotas_endpoint =
        without_slash(!quotas.empty()   ? quotas
                      : !global.empty() ? global
                                        : "https://servicequotas." + region + ".amazonaws.com");
    out.iam_endpoint = without_slash(!iam.empty()      ? iam
                                     : !global.empty() ? global
                                                       : "https://iam.amazonaws.com");
    out.ca_bundle = absolute(src.getenv("AWS_CA_BUNDLE"));
    return out;
}

std::map<std::string, std::string> AwsCredentials::terraform_env() const {
    std::map<std::string, std::string> env{{"AWS_REGION", region},
                                           {"AWS_SHARED_CREDENTIALS_FILE", credentials_file},
                                           {"AWS_CONFIG_FILE", config_file}};
    if (!profile.empty()) {
        // The module's provider names the profile (var.profile) when the spec does; AWS_PROFILE covers
        // one chosen by the environment, read from the same files.
        env["AWS_PROFILE"] = profile;
    } else {
        env["AWS_ACCESS_KEY_ID"] = access_key_id;
        env["AWS_SECRET_ACCESS_KEY"] = secret_access_key;
        if (!session_token.empty()) env["AWS_SESSION_TOKEN"] = session_token;
    }
    if (!ca_bundle.empty()) env["AWS_CA_BUNDLE"] = ca_bundle;
    return env;
}

} // namespace ddl
