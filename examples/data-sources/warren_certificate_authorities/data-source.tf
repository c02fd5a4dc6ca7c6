data "warren_certificate_authorities" "corp" {
  filter = "obj.subject_common_name == \"Corp Root CA\""
}
