#include "provision/Probe.hpp"

#include "provision/HostfileWriter.hpp"

#include <catch2/catch.hpp>

using namespace ddl;

TEST_CASE("probe output with two GPUs gives their names and count") {
    NodeState n;
    std::string out = "@gpus\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1234)\nGPU 1: NVIDIA H100 80GB HBM3 "
                      "(UUID: GPU-5678)\n"
                      "@cpus 32\n@mem 257000\n@os Ubuntu 22.04.4 LTS\n@kernel 5.15.0\n@hostname gpu1\n@end\n";
    REQUIRE(parse_probe_output(out, n).ok());
    CHECK(n.gpus == 2);
    CHECK(n.gpu_names[0] == "NVIDIA H100 80GB HBM3");
    CHECK(n.cpus == 32);
    CHECK(n.memory_mb == 257000);
    CHECK(n.os == "Ubuntu 22.04.4 LTS");
    CHECK(n.hostname == "gpu1");
}

TEST_CASE("probe output from a CPU-only node gives zero GPUs") {
    NodeState n;
    REQUIRE(
        parse_probe_output("@gpus\n@cpus 2\n@mem 1000\n@os Debian\n@kernel 6\n@hostname x\n@end\n", n).ok());
    CHECK(n.gpus == 0);
}

TEST_CASE("the CUDA the runtime role chose on a node comes from its /etc/ddl/cuda.json") {
    const std::string head =
        "@gpus\nGPU 0: Tesla V100-SXM2-16GB (UUID: GPU-1)\n@cpus 8\n@mem 64000\n@os Ubuntu\n";
    NodeState n;
    REQUIRE(parse_probe_output(head +
                                   "@kernel 6\n@hostname w1\n@cuda {\"major\": 12, \"minor\": 9, \"nccl\": "
                                   "\"2.27.7-1+cuda12.9\", \"driver\": \"535.247.01\"}\n@end\n",
                               n)
                .ok());
    CHECK(n.cuda == "12.9");
    // No file (a CPU node, or backend tcp), or one that is not ddl's: no CUDA shown.
    REQUIRE(parse_probe_output(head + "@kernel 6\n@hostname w1\n@cuda\n@end\n", n).ok());
    CHECK(n.cuda.empty());
    REQUIRE(
        parse_probe_output(head + "@cuda {\"major\": \"twelve\"}\n@kernel 6\n@hostname w1\n@end\n", n).ok());
    CHECK(n.cuda.empty());
    REQUIRE(
        parse_probe_output(head + "@cuda {\"major\": 13, \"minor\": \"x\"}\n@hostname w1\n@end\n", n).ok());
    CHECK(n.cuda == "13");
}

TEST_CASE("truncated probe output is an error") {
    NodeState n;
    CHECK_FALSE(parse_probe_output("@gpus\n@cpus 2\n", n).ok());
}

TEST_CASE("slots follow the GPUs, default to 1, and the spec's override wins") {
    Spec spec;
    NodeState gpu_node, cpu_node;
    gpu_node.gpus = 4;
    CHECK(slots_for(spec, gpu_node, true) == 4);
    CHECK(slots_for(spec, cpu_node, false) == 1);
    spec.runtime.slots_per_node = 2;
    CHECK(slots_for(spec, gpu_node, true) == 2);
    CHECK(slots_for(spec, cpu_node, true) == 2);
}

TEST_CASE("a GPU-less master beside GPU workers gets no rank and stays out of the hostfiles") {
    Spec spec;
    NodeState master, worker;
    master.name = "master";
    master.address = "10.0.0.1";
    worker.name = "worker1";
    worker.address = "10.0.0.2";
    worker.gpus = 2;
    master.slots = slots_for(spec, master, true);
    worker.slots = slots_for(spec, worker, true);
    CHECK(master.slots == 0);
    CHECK(worker.slots == 2);
    for (auto f : {HostfileFormat::openmpi, HostfileFormat::horovod, HostfileFormat::mpich})
        CHECK(format_hostfile({master, worker}, f).find("10.0.0.1") == std::string::npos);
    CHECK(format_hostfile({master, worker}, HostfileFormat::horovod) == "10.0.0.2 slots=2\n");
}

TEST_CASE("hostfiles are written in each format, IPv6 nodes by name for MPICH and Horovod") {
    std::vector<NodeState> nodes(2);
    nodes[0].name = "master";
    nodes[0].address = "10.0.0.1";
    nodes[0].slots = 2;
    nodes[1].name = "worker1";
    nodes[1].address = "2001:db8::5";
    nodes[1].slots = 1;
    CHECK(format_hostfile(nodes, HostfileFormat::horovod) == "10.0.0.1 slots=2\nworker1 slots=1\n");
    CHECK(format_hostfile(nodes, HostfileFormat::mpich) == "10.0.0.1:2\nworker1:1\n");
    auto openmpi = format_hostfile(nodes, HostfileFormat::openmpi);
    CHECK(openmpi.find("10.0.0.1 slots=2\n") != std::string::npos);
}
