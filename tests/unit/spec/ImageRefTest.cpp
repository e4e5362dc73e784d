#include "spec/ImageRef.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("an NGC reference splits into registry, repository and tag") {
    auto r = parse_image_ref("nvcr.io/nvidia/pytorch:24.05-py3");
    REQUIRE(r);
    CHECK(r->registry == "nvcr.io");
    CHECK(r->repository == "nvidia/pytorch");
    CHECK(r->tag == "24.05-py3");
    CHECK(r->digest.empty());
}

TEST_CASE("a reference without a registry is on docker.io; a port belongs to the registry") {
    auto hub = parse_image_ref("pytorch/pytorch");
    REQUIRE(hub);
    CHECK(hub->registry == "docker.io");
    CHECK(hub->repository == "pytorch/pytorch");
    CHECK(hub->tag.empty());
    auto port = parse_image_ref("registry.lab:5000/team/train@sha256:" + std::string(64, 'a'));
    REQUIRE(port);
    CHECK(port->registry == "registry.lab:5000");
    CHECK(port->repository == "team/train");
    CHECK(port->tag.empty());
    CHECK(port->digest == "sha256:" + std::string(64, 'a'));
    auto local = parse_image_ref("localhost/ddl-train:bookworm-1");
    REQUIRE(local);
    CHECK(local->registry == "localhost");
    CHECK(local->tag == "bookworm-1");
}

TEST_CASE("references engines refuse are refused") {
    for (const char* bad :
         {"", "NVIDIA/pytorch", "pytorch:", "a b", "nvcr.io/", "x//y", "-x/y", "x/y:-tag", "x@sha256:abc",
          "x:tag@md5:"
          "0000",
          "x/y:t;rm -rf /", "reg.io:port/x"}) {
        INFO(bad);
        CHECK_FALSE(parse_image_ref(bad));
    }
    CHECK_FALSE(parse_image_ref("x/" + std::string(260, 'a')));
}
