#include "util/Digest.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>
#include <unistd.h>

using namespace ddl;

TEST_CASE("a digest depends on the pieces and where they split") {
    CHECK(Digest{}.add("ab").add("c").hex() == Digest{}.add("ab").add("c").hex());
    CHECK(Digest{}.add("ab").add("c").hex() != Digest{}.add("a").add("bc").hex());
    CHECK(Digest{}.add("").hex() != Digest{}.hex());
    CHECK(Digest{}.hex().size() == 16);
}

TEST_CASE("a folder's digest follows names, contents and links, not creation order or byte-code caches") {
    TempDir a, b;
    REQUIRE(make_dirs(a.path() + "/x/__pycache__").ok());
    REQUIRE(make_dirs(b.path() + "/x").ok());
    REQUIRE(write_file_atomic(a.path() + "/x/one", "1").ok());
    REQUIRE(write_file_atomic(a.path() + "/two", "2").ok());
    REQUIRE(write_file_atomic(a.path() + "/x/__pycache__/one.pyc", "cache").ok());
    REQUIRE(write_file_atomic(b.path() + "/two", "2").ok());
    REQUIRE(write_file_atomic(b.path() + "/x/one", "1").ok());
    auto of = [](const std::string& dir) {
        Digest d;
        REQUIRE(d.add_tree(dir).ok());
        return d.hex();
    };
    CHECK(of(a.path()) == of(b.path()));
    REQUIRE(write_file_atomic(b.path() + "/x/one", "one").ok());
    CHECK(of(a.path()) != of(b.path()));
    REQUIRE(write_file_atomic(b.path() + "/x/one", "1").ok());
    REQUIRE(::symlink("two", (b.path() + "/link").c_str()) == 0);
    CHECK(of(a.path()) != of(b.path()));
    CHECK(of(a.path() + "/missing") == of(b.path() + "/missing"));
    CHECK(of(a.path() + "/missing") != of(a.path()));
}
