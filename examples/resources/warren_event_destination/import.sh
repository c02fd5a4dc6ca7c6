# The API never returns a destination's secrets: after an import they are null in state, and
# the next apply records a configured secret (or _wo_version) with one in-place update.
terraform import warren_event_destination.example ed_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue
