# SSH credentials created in the last week.
data "warren_ssh_credentials" "recent" {
  filter = "obj.created_at > timestamp(time.now).subtract(\"7d\")"
}
