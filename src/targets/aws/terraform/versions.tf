terraform {
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.100 is the last 5.x; the module uses nothing that 6.0 removed (cpu_core_count, ...) and
      # nothing that only 6.x has (the per-resource region argument, ...).
      version = ">= 5.100, < 7.0"
    }
  }
}

# Credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)
# or the shared credentials/config files (of var.profile when set), never from variables.
provider "aws" {
  region  = var.region
  profile = var.profile != "" ? var.profile : null
}
