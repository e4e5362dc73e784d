#pragma once
// GPULab job statuses as ddl compares them. GPULab writes a status by its value ("Running", "On Hold",
// "Must Halt") and its clients match it by name or value without case (ONHOLD, MUSTHALT): compared here in
// upper case without spaces or '_'.
#include <nlohmann/json.hpp>
#include <string>

namespace ddl::gpulab {

inline std::string status_of(const nlohmann::json& job) {
    if (!job.is_object() || !job.contains("state") || !job["state"].is_object()) return "";
    std::string out;
    for (char c : job["state"].value("status", "")) {
        if (c == ' ' || c == '_') continue;
        out += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
    }
    return out;
}

inline bool waiting(const std::string& s) {
    return s == "QUEUED" || s == "ASSIGNED" || s == "STARTING" || s == "ONHOLD" || s.empty();
}

// Still holding (or about to hold) GPUs: waiting, running, or being halted. A job with no status counts
// as active: nothing says it stopped.
inline bool active(const std::string& s) {
    return waiting(s) || s == "RUNNING" || s == "MUSTHALT" || s == "HALTING";
}

} // namespace ddl::gpulab
