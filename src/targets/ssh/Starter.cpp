#include "targets/ssh/SshSection.hpp"

namespace ddl {

std::string ssh_starter_body() {
    return R"(
access:
  user: ubuntu

ssh:
  hosts:
    - {name: master, address: 192.0.2.10}
    - {name: worker1, address: 192.0.2.11}
)";
}

} // namespace ddl
