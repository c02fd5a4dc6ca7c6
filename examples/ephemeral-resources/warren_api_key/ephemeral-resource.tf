# A short-lived API key: created when the run opens it, deleted when the run ends, and its
# token never written to state or plan.
ephemeral "warren_api_key" "run" {
  description = "terraform run"
}
