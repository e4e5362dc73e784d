#pragma once
// The aws target's section (`aws:`): region, image, network, Spot and placement of the EC2 cluster the
// module in src/targets/aws/terraform/ creates. Each key maps to one variable of its variables.tf.
#include "targets/TerraformSection.hpp"

#include <string>
#include <vector>

namespace ddl {

struct AwsSpec : TerraformSpec {
    std::string region;  // required, e.g. eu-west-1
    std::string profile; // shared-file profile; empty: environment, then default
    std::string ami;     // ami-...; empty: the newest image named like ami_name
    std::vector<std::string> ami_owners{"amazon"};
    std::string ami_name = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *";
    std::string vpc = "new";               // new | default
    std::string vpc_cidr = "10.42.0.0/16"; // with vpc: new
    std::string availability_zone;         // empty: EC2 decides
    bool spot = false;
    std::string spot_max_price;   // empty: the On-Demand price
    bool placement_group = false; // not together with spot
    int root_volume_gb = 100;
    std::string root_volume_type = "gp3"; // gp3 | gp2

    std::unique_ptr<TargetSection> clone() const override { return std::make_unique<AwsSpec>(*this); }
    nlohmann::json to_json() const override;
};

const TargetKind& aws_kind();
// The `aws:` part (with nodes, access and gpu) of `ddl init --target aws`.
std::string aws_starter_body();

} // namespace ddl
