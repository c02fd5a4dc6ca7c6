# The private key cannot be read back: after an import, the next apply records the configured
# key (or key version) in state without uploading the certificate again.
terraform import warren_tls_certificate.example cert_2Ajx5GWqUPMFdbJPdrVk8pOL6Ue
