# Inputs of the ddl AWS module. ddl writes terraform.tfvars.json with exactly these keys.

variable "cluster_name" {
  description = "Cluster name; prefix of every resource name and value of the ddl-cluster tag. 1-40 lowercase letters, digits and '-', starting with a letter."
  type        = string

  validation {
    condition     = length(var.cluster_name) <= 40 && can(regex("^[a-z]([-a-z0-9]*[a-z0-9])?$", var.cluster_name))
    error_message = "cluster_name must be 1-40 lowercase letters, digits and '-', start with a letter and not end with '-'."
  }

  # Security group names (<cluster_name>-nodes, -ssh) may not start with "sg-".
  validation {
    condition     = !startswith(var.cluster_name, "sg-")
    error_message = "cluster_name must not start with \"sg-\": EC2 refuses security group names that do."
  }
}

variable "state_dir" {
  description = "The ddl state folder that deployed this cluster, recorded in the instances' ddl-state tag so that `ddl gc --spec` can tell a leaked cluster from one still owned."
  type        = string
  default     = ""

  validation {
    condition     = length(var.state_dir) <= 256
    error_message = "state_dir must be at most 256 characters: it is an EC2 tag value."
  }
}

variable "region" {
  description = "AWS region to create the cluster in, such as us-east-1."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", var.region))
    error_message = "region must be an AWS region name such as us-east-1 or eu-central-1."
  }
}

variable "profile" {
  description = "Profile of the shared credentials/config files to use (empty: the environment's credentials, else the default profile)."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^[A-Za-z0-9_.@+-]*$", var.profile))
    error_message = "profile must be a profile name (letters, digits and _ . @ + -), or empty."
  }
}

variable "ssh_user" {
  description = "Login user of the image (ubuntu for the Ubuntu Deep Learning AMIs); reported in the outputs for ddl's SSH."
  type        = string

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_-]*$", var.ssh_user))
    error_message = "ssh_user must be a valid Unix user name."
  }
}

variable "public_key" {
  description = "OpenSSH public key installed for ssh_user on every node (EC2 imports ed25519 and RSA keys only)."
  type        = string

  validation {
    condition     = can(regex("^(ssh-ed25519|ssh-rsa) [A-Za-z0-9+/=]+", trimspace(var.public_key)))
    error_message = "public_key must be an OpenSSH ed25519 or RSA public key (\"ssh-ed25519 AAAA...\"); EC2 key pairs take no other type."
  }
}

variable "ami_id" {
  description = "AMI to boot every node from. Empty: the newest image named like ami_name_filter owned by one of ami_owners."
  type        = string
  default     = ""

  validation {
    condition     = var.ami_id == "" || can(regex("^ami-([0-9a-f]{8}|[0-9a-f]{17})$", var.ami_id))
    error_message = "ami_id must be an AMI id such as ami-0123456789abcdef0, or empty."
  }
}

variable "ami_owners" {
  description = "Owners (account ids, or the aliases amazon / aws-marketplace / self) the AMI lookup accepts; used when ami_id is empty."
  type        = list(string)
  default     = ["amazon"]

  validation {
    condition     = length(var.ami_owners) > 0 && alltrue([for o in var.ami_owners : can(regex("^([0-9]{12}|amazon|aws-marketplace|self)$", o))])
    error_message = "ami_owners must list at least one 12-digit account id or one of amazon, aws-marketplace, self."
  }
}

variable "ami_name_filter" {
  description = "Image name pattern (* and ? wildcards) of the AMI lookup; used when ami_id is empty. The default is the AWS Deep Learning Base AMI with the open-source NVIDIA driver, Ubuntu 22.04, x86_64."
  type        = string
  default     = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *"

  validation {
    condition     = length(var.ami_name_filter) > 0
    error_message = "ami_name_filter must not be empty."
  }
}

variable "master_instance_type" {
  description = "EC2 instance type of the master, such as g5.xlarge."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9-]+$", var.master_instance_type))
    error_message = "master_instance_type must be an EC2 instance type such as g5.xlarge."
  }
}

variable "worker_instance_type" {
  description = "EC2 instance type of the workers, such as g5.xlarge."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9-]+$", var.worker_instance_type))
    error_message = "worker_instance_type must be an EC2 instance type such as g5.xlarge."
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

variable "root_volume_gb" {
  description = "Size of each node's root volume in GiB (8-16384); at least the AMI's root snapshot (about 100 GiB for the Deep Learning AMIs is safe)."
  type        = number

  validation {
    condition     = var.root_volume_gb >= 8 && var.root_volume_gb <= 16384 && floor(var.root_volume_gb) == var.root_volume_gb
    error_message = "root_volume_gb must be a whole number from 8 to 16384."
  }
}

variable "root_volume_type" {
  description = "EBS type of the root volumes: gp3 or gp2 (types that need provisioned IOPS or cannot boot are not offered)."
  type        = string
  default     = "gp3"

  validation {
    condition     = contains(["gp3", "gp2"], var.root_volume_type)
    error_message = "root_volume_type must be gp3 or gp2."
  }
}

variable "use_default_vpc" {
  description = "Put the nodes into a default subnet of the region's default VPC instead of creating a VPC."
  type        = bool
  default     = false
}

variable "network_cidr" {
  description = "IPv4 CIDR of the VPC and its one subnet when a VPC is created (ignored with use_default_vpc); /16 to /28."
  type        = string

  validation {
    condition = (can(cidrhost(var.network_cidr, 0)) && !strcontains(var.network_cidr, ":")
      && try(cidrsubnet(var.network_cidr, 0, 0) == var.network_cidr, false)
    && try(tonumber(split("/", var.network_cidr)[1]) >= 16 && tonumber(split("/", var.network_cidr)[1]) <= 28, false))
    error_message = "network_cidr must be an IPv4 network address with a /16 to /28 prefix, such as 10.42.0.0/16 (no host bits set)."
  }
}

variable "availability_zone" {
  description = "Availability zone of the nodes, such as us-east-1a (empty: EC2 or the default VPC's first default subnet decides). Pick one that offers both instance types."
  type        = string
  default     = ""

  validation {
    condition     = var.availability_zone == "" || can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+[a-z]$", var.availability_zone))
    error_message = "availability_zone must be a zone name such as us-east-1a, or empty."
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
    condition     = alltrue([for c in var.allowed_cidrs : can(cidrhost(c, 0)) && try(cidrsubnet(c, 0, 0) == c, false)])
    error_message = "Every entry of allowed_cidrs must be a network address with its prefix, such as 203.0.113.0/24 or 2001:db8::/32 (no host bits set)."
  }
}

# Terraform < 1.9 cannot refer to another variable in a validation block, so the rule
# "no 0.0.0.0/0 or ::/0 unless allow_any_source" is a precondition of the SSH rules in security.tf,
# and "not spot together with placement_group" one of the placement group in main.tf; both fail the
# plan before anything is created.
variable "allow_any_source" {
  description = "Allow a /0 entry (0.0.0.0/0, ::/0) in allowed_cidrs, i.e. SSH from anywhere."
  type        = bool
  default     = false
}

variable "spot" {
  description = "Launch every node as a one-time Spot Instance, terminated on interruption (draws on the Spot vCPU quotas)."
  type        = bool
  default     = false
}

variable "spot_max_price" {
  description = "Highest hourly price in USD for a Spot Instance, such as \"0.50\" (empty: the On-Demand price). Only with spot."
  type        = string
  default     = ""

  validation {
    condition     = var.spot_max_price == "" || can(regex("^[0-9]+(\\.[0-9]+)?$", var.spot_max_price))
    error_message = "spot_max_price must be a price such as \"0.50\", or empty."
  }
}

variable "placement_group" {
  description = "Launch every node into a new cluster placement group (one zone, low-latency network between nodes). Not with spot."
  type        = bool
  default     = false
}

variable "user_data" {
  description = "cloud-init user data for every node (empty: none). Stored in clear text in the state with provider 6.x: no secrets."
  type        = string
  default     = ""
}
