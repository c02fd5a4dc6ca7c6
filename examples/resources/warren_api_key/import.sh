# The token cannot be recovered: after an import it is null.
terraform import warren_api_key.example ak_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue
