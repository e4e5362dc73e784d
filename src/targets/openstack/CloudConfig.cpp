#include "targets/openstack/CloudConfig.hpp"

#include "core/Log.hpp"
#include "util/Files.hpp"
#include "util/Strings.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

namespace ddl {
namespace {

std::vector<std::string> candidates(const CloudConfig::Sources& src, const std::string& base,
                                    const std::string& env_override) {
    std::vector<std::string> out;
    if (auto v = src.getenv(env_override); !v.empty()) out.push_back(v);
    std::vector<std::string> dirs{src.cwd};
    // openstacksdk uses the XDG user config dir, which honours $XDG_CONFIG_HOME.
    if (auto xdg = src.getenv("XDG_CONFIG_HOME"); !xdg.empty())
        dirs.push_back(xdg + "/openstack");
    else if (!src.home.empty())
        dirs.push_back(src.home + "/.config/openstack");
    dirs.push_back("/etc/openstack");
    for (const auto& d : dirs)
        for (const char* ext : {".yaml", ".yml"})
            out.push_back(d + "/" + base + ext);
    return out;
}

std::string first_existing(const std::vector<std::string>& paths) {
    for (const auto& p : paths)
        if (!p.empty() && path_exists(p)) return p;
    return "";
}

// Deep merge: values of `over` win (secure.yaml over clouds.yaml, as openstacksdk merges them).
YAML::Node merge(const YAML::Node& base, const YAML::Node& over) {
    if (!base.IsMap() || !over.IsMap()) return YAML::Clone(over);
    YAML::Node out = YAML::Clone(base);
    for (auto it = over.begin(); it != over.end(); ++it) {
        std::string key = it->first.as<std::string>();
        out[key] = out[key].IsDefined() ? merge(out[key], it->second) : YAML::Clone(it->second);
    }
    return out;
}

std::string scalar(const YAML::Node& map, const char* key) {
    auto v = map[key];
    return v.IsDefined() && v.IsScalar() ? v.as<std::string>() : "";
}

} // namespace

CloudConfig::Sources CloudConfig::system_sources() {
    Sources s;
    s.getenv = [](const std::string& name) {
        const char* v = std::getenv(name.c_str());
        return std::string(v ? v : "");
    };
    std::error_code ec;
    s.cwd = std::filesystem::current_path(ec).string();
    const char* home = std::getenv("HOME");
    s.home = home ? home : "";
    return s;
}

std::vector<std::string> CloudConfig::search_paths(const Sources& src) {
    return candidates(src, "clouds", "OS_CLIENT_CONFIG_FILE");
}

Result<CloudConfig> CloudConfig::load(const std::string& cloud, const Sources& src) {
    auto paths = search_paths(src);
    std::string file = first_existing(paths);
    if (file.empty())
        return Error{"no clouds.yaml found (looked in " + join(paths, ", ") +
                     "); download it from your cloud's dashboard (Identity > Application Credentials, or "
                     "Project > API Access > OpenStack clouds.yaml) and save it as "
                     "~/.config/openstack/clouds.yaml, or set OS_CLIENT_CONFIG_FILE"};
    file = std::filesystem::absolute(file).lexically_normal().string();
    YAML::Node doc;
    try {
        doc = YAML::LoadFile(file);
        std::string secure = first_existing(candidates(src, "secure", "OS_CLIENT_SECURE_FILE"));
        if (!secure.empty()) doc = merge(doc, YAML::LoadFile(secure));
    } catch (const YAML::Exception& e) {
        return Error{file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": not valid YAML: " + e.msg};
    }
    auto clouds = doc["clouds"];
    if (!clouds.IsMap()) return Error{file + ": no `clouds:` map; is this a clouds.yaml?"};
    std::vector<std::string> names;
    for (auto it = clouds.begin(); it != clouds.end(); ++it)
        names.push_back(it->first.as<std::string>());
    auto entry = clouds[cloud];
    if (!entry.IsDefined()) {
        std::string msg = file + ": no cloud \"" + cloud + "\" (openstack.cloud in the spec); it has: " +
                          (names.empty() ? "none" : join(names, ", "));
        if (auto m = closest_match(cloud, names)) msg += "; did you mean \"" + *m + "\"?";
        return Error{msg};
    }
    if (!entry.IsMap()) return Error{file + ": clouds." + cloud + " must be a map"};
    if (entry["profile"].IsDefined() && !entry["auth"]["auth_url"].IsDefined())
        return Error{file + ": clouds." + cloud +
                     " uses a vendor profile; ddl needs auth.auth_url written out (copy it from your cloud's "
                     "API access page)"};
    CloudConfig c;
    c.file = file;
    c.cloud = cloud;
    auto& a = c.auth;
    auto auth = entry["auth"];
    std::string where = file + ": clouds." + cloud;
    if (!auth.IsMap()) return Error{where + ".auth is missing"};
    if (auto t = scalar(entry, "auth_type"); !t.empty()) a.auth_type = t;
    if (a.auth_type == "v3password") a.auth_type = "password";
    if (a.auth_type == "v3applicationcredential" || a.auth_type == "applicationcredential")
        a.auth_type = "v3applicationcredential";
    else if (a.auth_type != "password")
        return Error{
            where + ".auth_type \"" + a.auth_type +
            "\" is not supported by ddl's pre-flight (password or v3applicationcredential); deploy with "
            "--skip-preflight to leave authentication to Terraform"};
    a.auth_url = scalar(auth, "auth_url");
    a.username = scalar(auth, "username");
    a.user_id = scalar(auth, "user_id");
    a.password = scalar(auth, "password");
    a.user_domain_name = scalar(auth, "user_domain_name");
    a.user_domain_id = scalar(auth, "user_domain_id");
    a.project_name = scalar(auth, "project_name");
    a.project_id = scalar(auth, "project_id");
    a.project_domain_name = scalar(auth, "project_domain_name");
    a.project_domain_id = scalar(auth, "project_domain_id");
    if (auto d = scalar(auth, "domain_name"); !d.empty()) {
        if (a.user_domain_name.empty()) a.user_domain_name = d;
        if (a.project_domain_name.empty()) a.project_domain_name = d;
    }
    a.application_credential_id = scalar(auth, "application_credential_id");
    a.application_credential_name = scalar(auth, "application_credential_name");
    a.application_credential_secret = scalar(auth, "application_credential_secret");
    log::register_secret(a.password);
    log::register_secret(a.application_credential_secret);
    a.region_name = scalar(entry, "region_name");
    if (a.region_name.empty() && entry["regions"].IsSequence() && entry["regions"].size() > 0) {
        auto r0 = entry["regions"][0];
        a.region_name = r0.IsScalar() ? r0.as<std::string>() : scalar(r0, "name");
    }
    if (auto i = scalar(entry, "interface"); !i.empty()) a.interface = i;
    if (a.interface == "publicURL") a.interface = "public";
    a.cacert = scalar(entry, "cacert");
    if (a.cacert.empty()) a.cacert = src.getenv("OS_CACERT");
    if (auto v = scalar(entry, "verify"); v == "false" || v == "False" || v == "no") a.verify = false;

    std::vector<std::string> missing;
    if (a.auth_url.empty()) missing.push_back("auth.auth_url");
    if (a.auth_type == "password") {
        if (a.username.empty() && a.user_id.empty()) missing.push_back("auth.username");
        if (a.password.empty()) missing.push_back("auth.password (or put it in secure.yaml)");
        if (a.project_name.empty() && a.project_id.empty())
            missing.push_back("auth.project_name or auth.project_id");
    } else {
        if (a.application_credential_id.empty() && a.application_credential_name.empty())
            missing.push_back("auth.application_credential_id");
        if (a.application_credential_secret.empty()) missing.push_back("auth.application_credential_secret");
        if (a.application_credential_id.empty() && a.username.empty() && a.user_id.empty())
            missing.push_back("auth.username (an application credential given by name needs its user)");
    }
    if (!missing.empty()) return Error{where + " lacks " + join(missing, ", ")};
    if (!a.cacert.empty() && access(a.cacert.c_str(), R_OK) != 0)
        return Error{where + ".cacert: cannot read " + a.cacert};
    return c;
}

std::map<std::string, std::string> CloudConfig::terraform_env() const {
    // The provider's `cloud` argument comes from the tfvars; OS_CLOUD and OS_CLIENT_CONFIG_FILE make
    // sure it reads this very file even when run from the cluster's state folder.
    std::map<std::string, std::string> env{{"OS_CLOUD", cloud}, {"OS_CLIENT_CONFIG_FILE", file}};
    if (!auth.cacert.empty()) env["OS_CACERT"] = std::filesystem::absolute(auth.cacert).string();
    return env;
}

} // namespace ddl
