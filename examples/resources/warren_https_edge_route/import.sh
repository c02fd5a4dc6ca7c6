# The import ID is the edge's ID and the route's, separated by a slash. Secrets are not
# imported: a secret configured as a value is recorded by the next apply.
terraform import warren_https_edge_route.api edghts_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue/edghtsrt_2Ajx5Nq4VfXqJyq4Vjq6GRzLMbT
