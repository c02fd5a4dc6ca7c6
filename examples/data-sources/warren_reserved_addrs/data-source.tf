data "warren_reserved_addrs" "eu" {
  filter = "obj.region == \"eu\""
}
