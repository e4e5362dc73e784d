// The smoke test's report: pass/fail, the failures, JUnit XML and the summary line per check.
#include "cli/SmokeReport.hpp"

#include <algorithm>
#include <cstdio>
#include <pugixml.hpp>
#include <sstream>

namespace ddl::cli {

bool SmokeReport::passed() const {
    for (const auto& r : results)
        if (r.status == CheckStatus::failed) return false;
    return !results.empty();
}

std::vector<std::string> SmokeReport::failures() const {
    std::vector<std::string> out;
    for (const auto& r : results)
        if (r.status == CheckStatus::failed) out.push_back(r.suite + "/" + r.name + ": " + r.message);
    return out;
}

std::string SmokeReport::junit_xml() const {
    pugi::xml_document doc;
    auto decl = doc.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    auto root = doc.append_child("testsuites");
    root.append_attribute("name") = ("ddl smoke-test " + cluster).c_str();
    std::vector<std::string> suites;
    for (const auto& r : results)
        if (std::find(suites.begin(), suites.end(), r.suite) == suites.end()) suites.push_back(r.suite);
    int all_tests = 0, all_failures = 0, all_skipped = 0;
    double all_time = 0;
    for (const auto& suite : suites) {
        auto s = root.append_child("testsuite");
        int tests = 0, failures = 0, skipped = 0;
        double time = 0;
        for (const auto& r : results) {
            if (r.suite != suite) continue;
            ++tests;
            time += r.seconds;
            auto tc = s.append_child("testcase");
            tc.append_attribute("classname") = (cluster + "." + suite).c_str();
            tc.append_attribute("name") = r.name.c_str();
            char t[32];
            std::snprintf(t, sizeof t, "%.3f", r.seconds);
            tc.append_attribute("time") = t;
            if (r.status == CheckStatus::failed) {
                ++failures;
                auto f = tc.append_child("failure");
                f.append_attribute("message") = r.message.c_str();
                f.append_attribute("type") = "check";
                f.text() = r.message.c_str();
            } else if (r.status == CheckStatus::skipped) {
                ++skipped;
                tc.append_child("skipped").append_attribute("message") = r.message.c_str();
            } else if (!r.message.empty()) {
                tc.append_child("system-out").text() = r.message.c_str();
            }
        }
        char t[32];
        std::snprintf(t, sizeof t, "%.3f", time);
        // Attribute order as the Jenkins/GitLab schema lists them.
        s.prepend_attribute("time") = t;
        s.prepend_attribute("skipped") = skipped;
        s.prepend_attribute("errors") = 0;
        s.prepend_attribute("failures") = failures;
        s.prepend_attribute("tests") = tests;
        s.prepend_attribute("name") = suite.c_str();
        all_tests += tests;
        all_failures += failures;
        all_skipped += skipped;
        all_time += time;
    }
    char t[32];
    std::snprintf(t, sizeof t, "%.3f", all_time);
    root.append_attribute("tests") = all_tests;
    root.append_attribute("failures") = all_failures;
    root.append_attribute("errors") = 0;
    root.append_attribute("skipped") = all_skipped;
    root.append_attribute("time") = t;
    std::ostringstream out;
    doc.save(out, "  ");
    return out.str();
}

std::string SmokeReport::summary() const {
    std::string out = "smoke test of cluster " + cluster + ": " + (passed() ? "PASSED" : "FAILED") + "\n";
    for (const auto& r : results) {
        const char* mark = r.status == CheckStatus::passed   ? "ok  "
                           : r.status == CheckStatus::failed ? "FAIL"
                                                             : "skip";
        char line[512];
        std::snprintf(line, sizeof line, "  %s %-8s %-28s %7.2f s", mark, r.suite.c_str(), r.name.c_str(),
                      r.seconds);
        out += line;
        if (!r.message.empty()) out += "  " + r.message;
        out += "\n";
    }
    if (!usage.empty()) out += "  usage: " + usage + "\n";
    return out;
}

} // namespace ddl::cli
