#pragma once
// Checks an AWS account and region can hold a cluster before Terraform creates anything: every node
// group's instance type is offered in the region (and supports Spot or a cluster placement group when the
// spec asks for them), the AMI exists there when aws.ami names one and its root snapshot fits
// aws.root_volume_gb, and the vCPUs the nodes need stay within the region's On-Demand or Spot vCPU quota
// of each instance family. Every problem is collected and reported at once, naming the key and the fix.
#include "targets/aws/AwsSection.hpp"
#include "targets/aws/Ec2Client.hpp"

#include <string>
#include <vector>

namespace ddl {

struct AwsPreflightResult {
    std::vector<std::string> problems; // each a full sentence naming the key and the fix
    std::vector<std::string> notes;    // what was checked, for progress output
};

// The vCPU quota an instance type draws on: family name and the On-Demand / Spot quota codes.
struct VcpuQuota {
    std::string family; // e.g. "G and VT"
    std::string on_demand_code, spot_code;
};
VcpuQuota vcpu_quota_for(const std::string& instance_type);

class AwsPreflight {
public:
    explicit AwsPreflight(Ec2Client& client) : m_client(client) {}
    // An Error only when the checks could not run (credentials refused, API unreachable or failing);
    // what the region or account lacks is in problems.
    Result<AwsPreflightResult> run(const Spec& spec);

private:
    Ec2Client& m_client;
};

} // namespace ddl
