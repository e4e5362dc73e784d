#include "cli/HealthParse.hpp"

#include <catch2/catch.hpp>

using namespace ddl::cli;

namespace {

// An A100 on R535 as `nvidia-smi -q` lays it out (nvidia-smi(1), GPU ATTRIBUTES), cut to the sections the
// doctor reads, with two uncorrectable DRAM errors and a link trained at x4.
constexpr const char* k_a100 = R"(
==============NVSMI LOG==============

Timestamp                                 : Fri Nov 27 06:00:00 2026
Driver Version                            : 535.247.01
CUDA Version                              : 12.2

Attached GPUs                             : 2
GPU 00000000:07:00.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    PCI
        Bus                               : 0x07
        Bus Id                            : 00000000:07:00.0
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 1
                Device Current            : 1
                Device Max                : 4
                Host Max                  : 4
            Link Width
                Max                       : 16x
                Current                   : 4x
    Clocks Event Reasons
        Idle                              : Active
        SW Power Cap                      : Not Active
        HW Slowdown                       : Active
            HW Thermal Slowdown           : Active
            HW Power Brake Slowdown       : Not Active
        SW Thermal Slowdown               : Not Active
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 1
            DRAM Correctable              : 5
            DRAM Uncorrectable            : 2
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 1
            DRAM Correctable              : 9
            DRAM Uncorrectable            : 7
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 2
        Pending                           : Yes
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)
GPU 00000000:0F:00.0
    Product Name                          : NVIDIA A100-SXM4-40GB
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 4
            Link Width
                Max                       : 16x
                Current                   : 16x
    ECC Errors
        Volatile
            SRAM Correctable              : N/A
            DRAM Uncorrectable            : N/A
)";

// A V100 on an older branch: "Clocks Throttle Reasons", ECC counts under Single/Double Bit with a Total.
constexpr const char* k_v100_old = R"(Driver Version                      : 418.226.00
CUDA Version                        : 10.1
Attached GPUs                       : 1
GPU 00000000:00:1E.0
    Product Name                    : Tesla V100-SXM2-16GB
    Clocks Throttle Reasons
        Idle                        : Not Active
        SW Thermal Slowdown         : Active
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 3
                Register File       : 0
                Total               : 3
            Double Bit
                Device Memory       : 1
                Register File       : 0
                Total               : 1
        Aggregate
            Single Bit
                Total               : 4
            Double Bit
                Total               : 1
    Retired Pages
        Single Bit ECC              : 0
        Double Bit ECC              : 1
        Pending Page Blacklist      : Yes
)";

} // namespace

TEST_CASE("nvidia-smi -q gives each GPU's uncorrectable ECC errors, pending remaps, link and slowdowns") {
    auto r = parse_nvidia_smi_q(k_a100);
    CHECK(r.driver == "535.247.01");
    CHECK(r.cuda == "12.2");
    CHECK(r.attached == 2);
    REQUIRE(r.gpus.size() == 2);
    const auto& g = r.gpus[0];
    CHECK(g.bus_id == "00000000:07:00.0");
    CHECK(g.product == "NVIDIA A100-SXM4-40GB");
    CHECK(g.ecc_volatile_uncorrectable == 3); // SEC-DED 1 + DRAM 2; parity 0
    CHECK(g.ecc_aggregate_uncorrectable == 8);
    CHECK(g.ecc_volatile_correctable == 5);
    CHECK(g.remapped_uncorrectable == 2);
    CHECK(g.remap_pending);
    CHECK_FALSE(g.remap_failed);
    CHECK(g.width_current == 4);
    CHECK(g.width_max == 16);
    CHECK(g.pcie_gen_current == 1);
    CHECK(g.pcie_gen_max == 4);
    CHECK(g.throttle_active == std::vector<std::string>{"Idle", "HW Slowdown", "HW Thermal Slowdown"});
    // N/A counters stay unknown rather than 0.
    CHECK(r.gpus[1].ecc_volatile_uncorrectable == -1);
    CHECK(r.gpus[1].width_current == 16);
}

TEST_CASE("an older driver's Single/Double Bit ECC layout counts only the totals, and retired pages") {
    auto r = parse_nvidia_smi_q(k_v100_old);
    REQUIRE(r.gpus.size() == 1);
    const auto& g = r.gpus[0];
    CHECK(g.ecc_volatile_uncorrectable == 1);
    CHECK(g.ecc_volatile_correctable == 3);
    CHECK(g.ecc_aggregate_uncorrectable == 1);
    CHECK(g.retired_dbe == 1);
    CHECK(g.retired_pending);
    CHECK(g.throttle_active == std::vector<std::string>{"SW Thermal Slowdown"});
    CHECK(throttle_reason_is_fault("SW Thermal Slowdown"));
    CHECK(throttle_reason_is_fault("HW Power Brake Slowdown"));
    CHECK_FALSE(throttle_reason_is_fault("Idle"));
    CHECK_FALSE(throttle_reason_is_fault("SW Power Cap"));
}

TEST_CASE("nvidia-smi that failed or printed nothing gives no GPU") {
    CHECK(parse_nvidia_smi_q("").gpus.empty());
    CHECK(
        parse_nvidia_smi_q("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")
            .gpus.empty());
}

TEST_CASE("Xid lines of the kernel log are counted per GPU and code, hardware ones told apart") {
    const std::string log =
        "[    5.1] nvidia: loading out-of-tree module\n"
        "[ 1201.3] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
        "[ 1301.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
        "Nov 27 06:00:00 node1 kernel: NVRM: Xid (PCI:0000:86:00): 13, Graphics SM Warp Exception\n";
    auto x = parse_xids(log);
    REQUIRE(x.size() == 2);
    CHECK(x[0].pci == "0000:3b:00");
    CHECK(x[0].code == 79);
    CHECK(x[0].count == 2);
    CHECK(x[0].text == "pid=1234, name=python3, GPU has fallen off the bus.");
    CHECK(x[1].code == 13);
    CHECK(xid_is_hardware(79));
    CHECK(xid_is_hardware(48));
    CHECK_FALSE(xid_is_hardware(13));
    CHECK(parse_xids("no nvidia here\n").empty());
}

TEST_CASE("dcgmi diag's table gives the rows that failed") {
    const std::string t = "Successfully ran diagnostic for group.\n"
                          "+---------------------------+------------------------------------------------+\n"
                          "| Diagnostic                | Result                                         |\n"
                          "+===========================+================================================+\n"
                          "|-----  Deployment  --------+------------------------------------------------|\n"
                          "| Denylist                  | Pass                                           |\n"
                          "| NVML Library              | Pass                                           |\n"
                          "| Page Retirement/Row Remap | Fail - All                                     |\n"
                          "| Persistence Mode          | Skip - All                                     |\n";
    CHECK(parse_dcgmi_failures(t) == std::vector<std::string>{"Page Retirement/Row Remap"});
}

TEST_CASE("NCCL_DEBUG=INFO says which network NCCL chose and on which interface") {
    auto s = parse_nccl_transport("node1:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.11<0>\n"
                                  "node1:1:1 [0] NCCL INFO Using network Socket\n");
    CHECK(s.net == "Socket");
    CHECK(s.iface == "eth0");
    auto ib = parse_nccl_transport(
        "n:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.1.0.5<0>\n"
        "n:1:1 [0] NCCL INFO Using network IB\n");
    CHECK(ib.net == "IB");
    CHECK(ib.iface == "mlx5_0");
    CHECK(parse_nccl_transport("nothing\n").net.empty());
}

TEST_CASE("the node script's sections and disk lines") {
    auto s = parse_sections("@@ time\n1700000000.5\n@@ df\n/shared 2048 4096\n/tmp\n@@ empty\n");
    CHECK(s["time"] == "1700000000.5\n");
    CHECK(s.count("empty") == 1);
    auto d = parse_disk_lines(s["df"]);
    REQUIRE(d.size() == 1); // /tmp printed no numbers: not found
    CHECK(d["/shared"].avail_kib == 2048);
    CHECK(d["/shared"].total_kib == 4096);
}
