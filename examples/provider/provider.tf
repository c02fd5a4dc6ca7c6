terraform {
  required_providers {
    warren = {
      source = "warrenhq/warren"
    }
  }
}

# api_url and api_key default to the WARREN_API_URL and WARREN_API_KEY environment variables.
provider "warren" {
  api_url = "https://warren.example.com"
}
