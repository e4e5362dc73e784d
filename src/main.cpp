#include "cli/App.hpp"

int main(int argc, char** argv) {
    return ddl::cli::run_app(argc, argv);
}
