#include "cli/Datasets.hpp"

#include "util/Strings.hpp"

namespace ddl::cli {

std::string dataset_path(const Spec& spec, const DatasetSpec& d) {
    return (d.to_shared ? spec.services.nfs_mount + "/ddl-data" : std::string(k_local_data_root)) + "/" +
           d.name;
}

std::string dataset_env_name(const DatasetSpec& d) {
    std::string up = d.name;
    for (auto& c : up)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return "DDL_DATA_" + up;
}

std::map<std::string, std::string> dataset_env(const Spec& spec) {
    std::map<std::string, std::string> env;
    for (const auto& d : spec.datasets)
        env[dataset_env_name(d)] = dataset_path(spec, d);
    return env;
}

const DatasetSpec* find_dataset(const Spec& spec, const std::string& name) {
    for (const auto& d : spec.datasets)
        if (d.name == name) return &d;
    return nullptr;
}

} // namespace ddl::cli
