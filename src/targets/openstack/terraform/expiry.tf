# When the cluster's lifetime ends (spec key `lifetime`): the servers' metadata ddl_expires and the Neutron
# resources' tag "ddl-expires=<time>", so that `ddl gc --expired --spec` finds an expired cluster on the
# cloud even where the state folder that deployed it is gone. No lifetime: neither.

variable "expires" {
  description = "When the cluster's lifetime ends, RFC 3339 in UTC (2026-11-28T00:00:00Z), recorded in the servers' ddl_expires metadata and the Neutron resources' ddl-expires tag; empty: no lifetime, not recorded."
  type        = string
  default     = ""

  validation {
    condition     = var.expires == "" || (can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires)) && can(formatdate("YYYY", var.expires)))
    error_message = "expires must be empty or a UTC time in RFC 3339 with whole seconds, such as 2026-11-28T00:00:00Z."
  }
}

locals {
  # Merged into the servers' metadata (main.tf).
  expiry_metadata = { for k, v in { ddl_expires = var.expires } : k => v if v != "" }
  # Added to local.ddl_tags (main.tf): Neutron tags are plain strings (no commas, at most 255 characters).
  expiry_tags = [for t in ["ddl-expires=${var.expires}"] : t if var.expires != ""]
}
