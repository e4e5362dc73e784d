#pragma once
// The smoke test's report (`ddl smoke-test`: deploy -> checks -> destroy, JUnit XML, notices). The types are
// separate from the run so the JUnit writer and the summary can be tested on their own.
#include <map>
#include <string>
#include <vector>

namespace ddl::cli {

enum class CheckStatus { passed, failed, skipped };

struct CheckResult {
    std::string suite; // deploy | checks | destroy
    std::string name;  // e.g. "ssh (worker1)"
    CheckStatus status = CheckStatus::passed;
    double seconds = 0;
    std::string message; // failure or skip reason; for passed checks an optional detail
};

struct SmokeReport {
    std::string cluster;
    std::vector<CheckResult> results;
    // What this run measured, for --history: deploy_s (all phases), busbw_gbs (the allreduce check),
    // node_hours and gpu_hours the cluster has used so far, and cost with the spec's price table.
    std::map<std::string, double> figures;
    std::string currency; // the price table's unit when figures has a cost
    std::string usage;    // one line: what the cluster has used (Lifetime's usage_text)
    bool passed() const;
    std::vector<std::string> failures() const; // "suite/name: message"
    std::string junit_xml() const;
    std::string summary() const;
};

} // namespace ddl::cli
