package rules

import (
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// EventDestinationText and EventSubscriptionText: §5.3 gives the event families no text
// codes of their own.
var (
	EventDestinationText  = GenericText
	EventSubscriptionText = GenericText
)

// EventTargetKinds are the members of an event destination's target (api.md), in the order
// messages list them.
var EventTargetKinds = []string{"delivery_stream", "data_stream", "log_group", "observability", "cloud_logs_ingestion"}

// EventSourceTypes are the event types of details.md §9.1.
var EventSourceTypes = func() []string {
	out := []string{"http_request_complete.v0", "tcp_connection_closed.v0", "agent_session_start.v0", "agent_session_stop.v0"}
	for _, family := range []string{
		"api_key", "tunnel_credential", "ssh_public_key", "ssh_certificate_authority",
		"ssh_host_certificate", "ssh_user_certificate", "domain", "tcp_address", "tls_certificate",
		"certificate_authority", "ip_policy", "ip_policy_rule", "ip_restriction",
		"event_destination", "event_subscription", "vault", "secret",
	} {
		for _, op := range []string{"created", "updated", "deleted"} {
			out = append(out, family+"_"+op+".v0")
		}
	}
	return out
}()

// EventFormat checks an event destination's format: JSON, in any case (the API echoes the
// caller's spelling, details.md §9.3).
func EventFormat(format *string) error {
	if format == nil || *format == "" {
		return violation("ERR_235", "format", "The format is required; the only format is 'JSON'.")
	}
	if !strings.EqualFold(*format, "JSON") {
		return violation("ERR_235", "format", "Invalid format %s; the only format is 'JSON'.", Quote(*format))
	}
	return nil
}

// EventTargetKind names the members set in t, in EventTargetKinds order.
func EventTargetKind(t *api.EventTarget) []string {
	var out []string
	for i, set := range []bool{t.DeliveryStream != nil, t.DataStream != nil, t.LogGroup != nil, t.Observability != nil, t.CloudLogsIngestion != nil} {
		if set {
			out = append(out, EventTargetKinds[i])
		}
	}
	return out
}

// EventTarget checks a whole target: exactly one kind (ERR_5100, ERR_5115), then the
// members of that kind, secrets included.
func EventTarget(t *api.EventTarget) error {
	if t == nil {
		return violation("ERR_5100", "target", "The target is required: one of %s.", strings.Join(EventTargetKinds, ", "))
	}
	kinds := EventTargetKind(t)
	switch {
	case len(kinds) == 0:
		return violation("ERR_5100", "target", "The target needs one of %s.", strings.Join(EventTargetKinds, ", "))
	case len(kinds) > 1:
		return violation("ERR_5115", "target", "The target has more than one kind (%s); give exactly one of %s.", strings.Join(kinds, ", "), strings.Join(EventTargetKinds, ", "))
	}
	switch {
	case t.DeliveryStream != nil:
		return awsTarget("target.delivery_stream", t.DeliveryStream.Auth, "delivery_stream_arn", t.DeliveryStream.DeliveryStreamARN, "firehose", "deliverystream")
	case t.DataStream != nil:
		return awsTarget("target.data_stream", t.DataStream.Auth, "stream_arn", t.DataStream.StreamARN, "kinesis", "stream")
	case t.LogGroup != nil:
		return awsTarget("target.log_group", t.LogGroup.Auth, "log_group_arn", t.LogGroup.LogGroupARN, "logs", "log-group")
	case t.Observability != nil:
		return observabilityTarget(t.Observability)
	default:
		return cloudLogsTarget(t.CloudLogsIngestion)
	}
}

// awsTarget checks the auth and the resource ARN of an AWS target.
func awsTarget(field string, auth *api.AWSAuth, arnMember, arn, service, resourceType string) error {
	if err := AWSAuth(field+".auth", auth); err != nil {
		return err
	}
	if arn == "" {
		return violation("ERR_236", field+"."+arnMember, "The %s is required.", arnMember)
	}
	return ARN(field+"."+arnMember, arn, service, resourceType)
}

// AWSAuth checks an AWS target's auth: present (ERR_5106), exactly one of role and creds
// (ERR_5107, ERR_5116), a role ARN of IAM (ERR_5104), both access-key members (ERR_240).
func AWSAuth(field string, auth *api.AWSAuth) error {
	switch {
	case auth == nil:
		return violation("ERR_5106", field, "The target needs an auth: a role or creds.")
	case auth.Role == nil && auth.Creds == nil:
		return violation("ERR_5107", field, "The auth needs one of role and creds.")
	case auth.Role != nil && auth.Creds != nil:
		return violation("ERR_5116", field, "The auth has both role and creds; give exactly one.")
	case auth.Role != nil:
		if err := ARN(field+".role.role_arn", auth.Role.RoleARN, "iam", "role"); err != nil {
			return violation("ERR_5104", field+".role.role_arn", "Invalid role_arn: %s", err.Error())
		}
	case auth.Creds.AccessKeyID == "":
		return violation("ERR_240", field+".creds.access_key_id", "The creds need an access_key_id.")
	case auth.Creds.SecretAccessKey == "":
		return violation("ERR_240", field+".creds.secret_access_key", "The creds need a secret_access_key.")
	}
	return nil
}

// ARN checks an Amazon resource name arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE whose
// resource is of the given type ("role/x", "stream/x", "log-group:x"): any non-empty
// partition, the given service (ERR_5119) and resource type (ERR_5120); anything that is not
// an ARN at all is ERR_5118.
func ARN(field, arn, service, resourceType string) error {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] == "" || parts[5] == "" {
		return violation("ERR_5118", field, "%s is not an ARN (arn:partition:service:region:account:resource).", Quote(arn))
	}
	if parts[2] != service {
		return violation("ERR_5119", field, "The ARN %s names the service %s; expected %s.", Quote(arn), Quote(parts[2]), service)
	}
	typ, name, ok := strings.Cut(parts[5], "/")
	if resourceType == "log-group" {
		typ, name, ok = strings.Cut(parts[5], ":")
	}
	if !ok || typ != resourceType || name == "" {
		return violation("ERR_5120", field, "The ARN %s does not name a %s.", Quote(arn), resourceType)
	}
	return nil
}

// ObservabilitySites are the sites of the observability service's logs intake; "" is the
// default site.
var ObservabilitySites = []string{"datadoghq.com", "us3.datadoghq.com", "us5.datadoghq.com", "datadoghq.eu", "ap1.datadoghq.com", "ap2.datadoghq.com", "ddog-gov.com"}

func observabilityTarget(t *api.EventTargetObservability) error {
	if t.APIKey == "" {
		return violation("ERR_5133", "target.observability.api_key", "The observability target needs an api_key.")
	}
	if t.Site != "" && !slices.Contains(ObservabilitySites, t.Site) {
		return violation("ERR_5134", "target.observability.site", "Invalid site %s; valid sites: %s.", Quote(t.Site), strings.Join(ObservabilitySites, ", "))
	}
	return nil
}

var (
	guidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	dcrRE  = regexp.MustCompile(`^dcr-[0-9a-fA-F]{32}$`)
)

// cloudLogsTarget: every member is required (ERR_5136); the tenant and client are GUIDs
// (ERR_5137), the ingestion URI an https URL (ERR_5138), the rule an immutable ID dcr-<32 hex>
// (ERR_5139).
func cloudLogsTarget(t *api.EventTargetCloudLogsIngestion) error {
	const f = "target.cloud_logs_ingestion."
	for _, m := range []struct{ name, value string }{
		{"tenant_id", t.TenantID}, {"client_id", t.ClientID}, {"client_secret", t.ClientSecret},
		{"logs_ingestion_uri", t.LogsIngestionURI}, {"data_collection_rule_id", t.DataCollectionRuleID},
		{"data_collection_stream_name", t.DataCollectionStreamName},
	} {
		if m.value == "" {
			return violation("ERR_5136", f+m.name, "The cloud_logs_ingestion target needs a %s.", m.name)
		}
	}
	for _, m := range []struct{ name, value string }{{"tenant_id", t.TenantID}, {"client_id", t.ClientID}} {
		if !guidRE.MatchString(m.value) {
			return violation("ERR_5137", f+m.name, "The %s %s is not a GUID.", m.name, Quote(m.value))
		}
	}
	if u, err := url.Parse(t.LogsIngestionURI); err != nil || u.Scheme != "https" || u.Host == "" {
		return violation("ERR_5138", f+"logs_ingestion_uri", "The logs_ingestion_uri %s is not an https URL.", Quote(t.LogsIngestionURI))
	}
	if !dcrRE.MatchString(t.DataCollectionRuleID) {
		return violation("ERR_5139", f+"data_collection_rule_id", "The data_collection_rule_id %s is not an immutable rule ID (dcr- and 32 hex digits).", Quote(t.DataCollectionRuleID))
	}
	return nil
}

// EventSourceType checks one source type against §9.1 (ERR_238, naming the closest type).
func EventSourceType(typ string) error {
	if !slices.Contains(EventSourceTypes, typ) {
		return violation("ERR_238", "sources", "Invalid event type %s.%s", Quote(typ), didYouMean(typ, EventSourceTypes))
	}
	return nil
}

// EventSources checks a subscription's source types: each of §9.1 (ERR_238), none twice
// (ERR_5127).
func EventSources(types []string) error {
	for i, typ := range types {
		if err := EventSourceType(typ); err != nil {
			return err
		}
		if slices.Contains(types[:i], typ) {
			return violation("ERR_5127", "sources", "The event type %s is given more than once; source types must be unique within a subscription.", Quote(typ))
		}
	}
	return nil
}
