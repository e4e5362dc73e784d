#include "cli/PrintDiagnostics.hpp"

#include <iostream>
#include <nlohmann/json.hpp>

namespace ddl::cli {

void print_diagnostics(bool json, const Diagnostics& d) {
    if (json)
        std::cout << nlohmann::json{{"valid", !d.has_errors()}, {"diagnostics", d.to_json()}}.dump(2) << "\n";
    else
        std::cerr << d.format_text();
}

} // namespace ddl::cli
