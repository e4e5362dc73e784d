#include "util/Strings.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("split keeps empty fields between separators") {
    CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
    CHECK(split("", ',') == std::vector<std::string>{""});
}

TEST_CASE("closest_match suggests a near spelling and nothing for a far one") {
    std::vector<std::string> keys{"workers", "master", "services"};
    CHECK(closest_match("wokers", keys) == std::optional<std::string>("workers"));
    CHECK_FALSE(closest_match("zzzzzzzz", keys).has_value());
}

TEST_CASE("parse_int rejects trailing junk and accepts negatives") {
    CHECK(parse_int("42") == std::optional<std::int64_t>(42));
    CHECK(parse_int("-3") == std::optional<std::int64_t>(-3));
    CHECK_FALSE(parse_int("4x").has_value());
    CHECK_FALSE(parse_int("").has_value());
    CHECK_FALSE(parse_int("99999999999999999999999").has_value());
}

TEST_CASE("shell_quote leaves plain words alone and quotes the rest safely") {
    CHECK(shell_quote("abc/d-e") == "abc/d-e");
    CHECK(shell_quote("a b") == "'a b'");
    CHECK(shell_quote("it's") == "'it'\\''s'");
    CHECK(shell_quote("") == "''");
}

TEST_CASE("is_valid_utf8 accepts multibyte text and rejects truncated or stray bytes") {
    CHECK(is_valid_utf8("h\xc3\xa9llo"));
    CHECK(is_valid_utf8("\xe2\x82\xac"));
    CHECK_FALSE(is_valid_utf8("\xc3"));
    CHECK_FALSE(is_valid_utf8("\xff\xfe"));
    CHECK_FALSE(is_valid_utf8("ab\xe2\x82"));
}

TEST_CASE(
    "printable_utf8 keeps letters of any script and escapes control, invalid and invisible characters") {
    CHECK(printable_utf8("café-ü", 40) == "café-ü");
    CHECK(printable_utf8("名前", 40) == "名前");
    CHECK(printable_utf8("a\tb\x7f", 40) == "a\\x09b\\x7f");
    CHECK(printable_utf8("a\xff"
                         "b",
                         40) == "a\\xffb");
    CHECK(printable_utf8("x\xe2\x80\xaey", 40) == "x\\u{202e}y"); // right-to-left override
    CHECK(printable_utf8("\xef\xbb\xbfz", 40) == "\\u{feff}z");
    CHECK(printable_utf8("ééééé", 4) == "é...");
    CHECK(printable_utf8("abcd", 4) == "abcd");
}
