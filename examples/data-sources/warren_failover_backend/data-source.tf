data "warren_failover_backend" "example" {
  id = "bkdfo_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue"
}
