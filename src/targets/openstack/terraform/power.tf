# The cluster's power state: `ddl stop` sets "shutoff", `ddl start` "active" (in power.auto.tfvars.json,
# beside terraform.tfvars.json). The provider's power_state (openstack_compute_instance_v2, "Argument
# Reference") takes "active", "shutoff", "shelved_offloaded" and "paused"; a change is an update in place:
# Nova's os-stop / os-start (Compute API, "Stop Server (os-stop Action)", "Start Server (os-start Action)").
#
# Stop, not shelve: a SHUTOFF server stays on its host with its flavor's vCPUs, RAM and GPUs held, so
# `ddl start` brings every node back within seconds and cannot fail for want of a free GPU host. A shelved
# (offloaded) server frees its host, but unshelving waits for the scheduler to find one again, which on a
# busy shared GPU cloud may leave the cluster short of nodes. Either way the boot volumes stay (and keep
# their Cinder quota and cost); a stopped server still counts against the project's instance, core and
# RAM quota, and clouds that bill by flavor may still bill it.
variable "power_state" {
  description = "The nodes' power state: \"active\" (running) or \"shutoff\" (stopped by `ddl stop`; disks kept)."
  type        = string
  default     = "active"

  validation {
    condition     = contains(["active", "shutoff"], var.power_state)
    error_message = "power_state must be \"active\" or \"shutoff\"."
  }
}
