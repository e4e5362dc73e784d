#include "spec/SectionReader.hpp"

#include "core/Url.hpp"
#include "util/Net.hpp"
#include "util/Strings.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace ddl {

std::string SectionReader::printable(const std::string& s) {
    return printable_utf8(s, 40);
}

void SectionReader::rate(const YAML::Node& n, const std::string& key, const std::string& p,
                         std::uint64_t& out, std::uint64_t min, std::uint64_t max, bool allow_unlimited) {
    auto x = string(n, key, p);
    if (!x) return;
    auto r = parse_rate(*x);
    std::string full = p + "." + key;
    if (!r || (*r == 0 && !allow_unlimited)) {
        diags().error(
            pos(n[key]), full + " must be a rate like 1gbit or 100mbit (got \"" + printable(*x) + "\")",
            allow_unlimited ? "units: kbit, mbit, gbit; or \"unlimited\"" : "units: kbit, mbit, gbit");
        return;
    }
    if (*r != 0 && (*r < min || *r > max)) {
        diags().error(pos(n[key]),
                      full + " must be " + format_rate(min) + "-" + format_rate(max) + " (got " + *x + ")");
        return;
    }
    out = *r;
}

void SectionReader::url(const YAML::Node& n, const std::string& key, const std::string& p, bool http_ok,
                        const std::string& hint, std::string& out, bool required,
                        const std::string& missing_hint) {
    auto x = string(n, key, p, required, missing_hint);
    if (!x) return;
    if (auto s = check_service_url(*x, http_ok, false); !s)
        diags().error(pos(n[key]),
                      p + "." + key + " " + s.error().message + " (got \"" + printable(*x) + "\")", hint);
    else
        out = *x;
}

void SectionReader::key_file(const YAML::Node& n, const std::string& key, const std::string& p,
                             std::string& out) {
    auto x = string(n, key, p);
    if (!x) return;
    out = *x;
    if (!m_check_files) return;
    struct stat st {};
    std::string where = p + "." + key + " " + printable(*x);
    if (x->empty())
        diags().error(pos(n[key]), p + "." + key + " is empty", "leave it out, or name the key file");
    else if (ends_with(*x, ".pub"))
        diags().error(pos(n[key]), where + " is a public key",
                      "name the private key beside it: " + printable(x->substr(0, x->size() - 4)));
    else if (::stat(x->c_str(), &st) != 0)
        diags().error(pos(n[key]), where + " does not exist",
                      "write the path of the private key (relative to where ddl runs; '~' is not "
                      "expanded), e.g. /home/you/.ssh/id_ed25519");
    else if (!S_ISREG(st.st_mode) || ::access(x->c_str(), R_OK) != 0)
        diags().error(pos(n[key]), where + " is not a file ddl can read", "name a readable private key file");
}

void SectionReader::abs_path(const YAML::Node& n, const std::string& key, const std::string& p,
                             std::string& out) {
    auto x = string(n, key, p);
    if (!x) return;
    if (x->empty() || x->front() != '/' || x->find("..") != std::string::npos ||
        x->find_first_of(" \t\n") != std::string::npos)
        diags().error(pos(n[key]), p + "." + key + " must be an absolute path without '..' (got \"" +
                                       printable(*x) + "\")");
    else
        out = *x;
}

} // namespace ddl
