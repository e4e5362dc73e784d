#include "cli/Confirm.hpp"

#include <catch2/catch.hpp>
#include <sstream>

using namespace ddl::cli;

TEST_CASE("a confirmation prompt is approved only by the expected answer") {
    std::ostringstream out;
    std::istringstream right("life\n");
    CHECK(ask(right, out, "Type the cluster's name (life) to destroy it: ", "life") == Approval::approved);
    CHECK(out.str() == "Type the cluster's name (life) to destroy it: ");
    std::istringstream padded("  life \n");
    CHECK(ask(padded, out, "? ", "life") == Approval::approved);
    std::istringstream wrong("lif\n");
    CHECK(ask(wrong, out, "? ", "life") == Approval::declined);
    std::istringstream y("y\n");
    CHECK(ask(y, out, "Type yes: ", "yes") == Approval::declined);
}

TEST_CASE("end of input at a confirmation prompt declines") {
    std::ostringstream out;
    std::istringstream empty;
    CHECK(ask(empty, out, "? ", "yes") == Approval::declined);
}
