# When the cluster's lifetime ends (spec key `lifetime`), on every resource the module tags: the tag
# ddl-expires, so that `ddl gc --expired --spec` finds an expired cluster in the region even where the
# state folder that deployed it is gone. No lifetime: no tag.

variable "expires" {
  description = "When the cluster's lifetime ends, RFC 3339 in UTC (2026-11-28T00:00:00Z), recorded in every resource's ddl-expires tag; empty: no lifetime, no tag."
  type        = string
  default     = ""

  validation {
    condition     = var.expires == "" || (can(regex("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", var.expires)) && can(formatdate("YYYY", var.expires)))
    error_message = "expires must be empty or a UTC time in RFC 3339 with whole seconds, such as 2026-11-28T00:00:00Z."
  }
}

locals {
  # Merged into local.tags (main.tf): {"ddl-expires" = var.expires}, or nothing without a lifetime.
  expiry_tags = { for k, v in { "ddl-expires" = var.expires } : k => v if v != "" }
}
