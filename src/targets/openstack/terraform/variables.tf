# The OpenStack module's own inputs; those of every cloud are in common.tf. ddl writes terraform.tfvars.json
# with exactly the keys of both files.

variable "cloud" {
  description = "Entry of clouds.yaml to use (the provider's `cloud` argument)."
  type        = string

  validation {
    condition     = length(var.cloud) > 0
    error_message = "cloud must name an entry of clouds.yaml."
  }
}

variable "image_name" {
  description = "Name of the Glance image the boot volumes are created from (the most recent one of that name is used)."
  type        = string

  validation {
    condition     = length(var.image_name) > 0
    error_message = "image_name must not be empty."
  }
}

variable "master_flavor" {
  description = "Flavor name of the master."
  type        = string

  validation {
    condition     = length(var.master_flavor) > 0
    error_message = "master_flavor must not be empty."
  }
}

variable "worker_flavor" {
  description = "Flavor name of the workers."
  type        = string

  validation {
    condition     = length(var.worker_flavor) > 0
    error_message = "worker_flavor must not be empty."
  }
}

variable "boot_volume_gb" {
  description = "Size of each node's boot volume in GB (10-65536)."
  type        = number

  validation {
    condition     = var.boot_volume_gb >= 10 && var.boot_volume_gb <= 65536 && floor(var.boot_volume_gb) == var.boot_volume_gb
    error_message = "boot_volume_gb must be a whole number from 10 to 65536."
  }
}

variable "external_network" {
  description = "Name of the external (provider) network: the router's gateway and the floating IP pool."
  type        = string

  validation {
    condition     = length(var.external_network) > 0
    error_message = "external_network must not be empty."
  }
}

variable "network_name" {
  description = "Existing network to attach the nodes to. Empty: create a network, subnet and router."
  type        = string
  default     = ""
}

variable "dns_nameservers" {
  description = "DNS servers of the created subnet (empty: the cloud's default)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for s in var.dns_nameservers : can(cidrhost("${s}/32", 0)) || can(cidrhost("${s}/128", 0))])
    error_message = "dns_nameservers must be IP addresses."
  }
}

variable "anti_affinity" {
  description = "Place every node on a different hypervisor (hard anti-affinity server group)."
  type        = bool
  default     = false
}
