#include "remote/SshKeys.hpp"

#include "util/Files.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("an OpenSSH public key line is accepted; a private key, garbage or a broken key is refused") {
    TempDir dir;
    auto pub = ensure_keypair(dir.path() + "/id_ed25519", "test@ddl");
    REQUIRE(pub.ok());
    auto ok = parse_openssh_public_key("  " + *pub + "\n", "--public-key k.pub");
    REQUIRE(ok.ok());
    CHECK(*ok == *pub);
    // Without a comment, and with two spaces between the fields.
    auto fields_end = pub->rfind(' ');
    auto type_end = pub->find(' ');
    CHECK(parse_openssh_public_key(pub->substr(0, fields_end), "k").ok());
    CHECK(parse_openssh_public_key(pub->substr(0, type_end) + "  " + pub->substr(type_end + 1), "k").ok());

    auto priv = read_file(dir.path() + "/id_ed25519");
    REQUIRE(priv.ok());
    auto refused = parse_openssh_public_key(*priv, "--public-key id_ed25519");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("--public-key id_ed25519 holds a private key") != std::string::npos);

    for (const char* bad : {"", "hello", "ssh-ed25519", "ssh-foo AAAAC3NzaC1lZDI1NTE5AAAAI",
                            "ssh-ed25519 !!!notbase64", "ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAABAQ"}) {
        INFO(bad);
        CHECK_FALSE(parse_openssh_public_key(bad, "k").ok());
    }
    CHECK_FALSE(parse_openssh_public_key(*pub + "\n" + *pub, "k").ok());
}
