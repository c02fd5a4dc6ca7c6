# Events to a Firehose delivery stream, through a role the server assumes.
resource "warren_event_destination" "firehose" {
  description = "audit trail"
  format      = "JSON"
  target = {
    delivery_stream = {
      delivery_stream_arn = "arn:aws:firehose:eu-west-1:123456789012:deliverystream/warren-audit"
      auth = {
        role = { role_arn = "arn:aws:iam::123456789012:role/warren-events" }
      }
    }
  }
}

variable "observability_api_key" {
  type      = string
  sensitive = true
}

# Events to an observability service's logs intake. The API key is write-only: it reaches
# the server but never the state. Bump api_key_wo_version to send a new key.
resource "warren_event_destination" "logs" {
  format = "JSON"
  target = {
    observability = {
      api_key_wo         = var.observability_api_key
      api_key_wo_version = 1
      service            = "warren"
      tags               = "env:prod"
      site               = "datadoghq.eu"
    }
  }
}
