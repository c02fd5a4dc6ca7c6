# The token cannot be recovered: after an import it is null.
terraform import warren_tunnel_credential.example cr_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue
