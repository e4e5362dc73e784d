# Inputs of the ddl OpenStack module. ddl writes terraform.tfvars.json with exactly these keys.

variable "cluster_name" {
  description = "Cluster name; prefix of every resource name. DNS-safe: 1-40 lowercase letters, digits and '-', starting with a letter."
  type        = string

  validation {
    condition     = length(var.cluster_name) <= 40 && can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be 1-40 lowercase letters, digits and '-', start with a letter and not end with '-'."
  }
}

variable "state_dir" {
  description = "The ddl state folder that deployed this cluster, recorded on its servers so that `ddl gc --spec` can tell a leaked cluster from one still owned."
  type        = string
  default     = ""
}

variable "cloud" {
  description = "Entry of clouds.yaml to use (the provider's `cloud` argument)."
  type        = string

  validation {
    condition     = length(var.cloud) > 0
    error_message = "cloud must name an entry of clouds.yaml."
  }
}

variable "ssh_user" {
  description = "Login user of the image (e.g. ubuntu); reported in the outputs for ddl's SSH."
  type        = string

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_-]*$", var.ssh_user))
    error_message = "ssh_user must be a valid Unix user name."
  }
}

variable "public_key" {
  description = "OpenSSH public key installed for ssh_user on every node."
  type        = string

  validation {
    condition     = can(regex("^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-[a-z0-9@.-]+) [A-Za-z0-9+/=]+", trimspace(var.public_key)))
    error_message = "public_key must be an OpenSSH public key (\"ssh-ed25519 AAAA...\")."
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

variable "worker_count" {
  description = "Number of workers (0-256)."
  type        = number

  validation {
    condition     = var.worker_count >= 0 && var.worker_count <= 256 && floor(var.worker_count) == var.worker_count
    error_message = "worker_count must be a whole number from 0 to 256."
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

variable "network_cidr" {
  description = "CIDR of the subnet created when network_name is empty."
  type        = string

  validation {
    condition     = can(cidrhost(var.network_cidr, 0)) && !strcontains(var.network_cidr, ":") && try(cidrsubnet(var.network_cidr, 0, 0) == var.network_cidr, false)
    error_message = "network_cidr must be an IPv4 network address with its prefix, such as 192.168.42.0/24 (no host bits set)."
  }
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

variable "allowed_cidrs" {
  description = "Networks allowed to reach the master over SSH (22/tcp). Nothing else is open from outside."
  type        = list(string)

  validation {
    condition     = length(var.allowed_cidrs) > 0
    error_message = "allowed_cidrs must list at least one network."
  }

  validation {
    condition     = alltrue([for c in var.allowed_cidrs : can(cidrhost(c, 0))])
    error_message = "Every entry of allowed_cidrs must be a CIDR such as 203.0.113.0/24 or 2001:db8::/32."
  }
}

# Terraform < 1.9 cannot refer to another variable in a validation block, so the rule
# "no 0.0.0.0/0 or ::/0 unless allow_any_source" is a precondition of the SSH rule in security.tf;
# it fails the plan before anything is created.
variable "allow_any_source" {
  description = "Allow a /0 entry (0.0.0.0/0, ::/0) in allowed_cidrs, i.e. SSH from anywhere."
  type        = bool
  default     = false
}

variable "anti_affinity" {
  description = "Place every node on a different hypervisor (hard anti-affinity server group)."
  type        = bool
  default     = false
}

variable "user_data" {
  description = "cloud-init user data for every node (empty: none)."
  type        = string
  default     = ""
}
