package api

import "encoding/json"

// EventDestination is where an account's events are sent (/event_destinations, details.md
// §6.15, §9.3). Its secrets (secret_access_key, the observability api_key, the cloud-logs
// client_secret) are kept server-side and always answered as "".
type EventDestination struct {
	Meta
	Description string      `json:"description,omitempty"`
	Metadata    string      `json:"metadata,omitempty"`
	Format      string      `json:"format"`
	Target      EventTarget `json:"target"`
}

// EventTarget has exactly one member set.
type EventTarget struct {
	DeliveryStream     *EventTargetDeliveryStream     `json:"delivery_stream,omitempty"`
	DataStream         *EventTargetDataStream         `json:"data_stream,omitempty"`
	LogGroup           *EventTargetLogGroup           `json:"log_group,omitempty"`
	Observability      *EventTargetObservability      `json:"observability,omitempty"`
	CloudLogsIngestion *EventTargetCloudLogsIngestion `json:"cloud_logs_ingestion,omitempty"`
}

// EventTargetDeliveryStream sends events to a delivery stream (Firehose).
type EventTargetDeliveryStream struct {
	Auth              *AWSAuth `json:"auth,omitempty"`
	DeliveryStreamARN string   `json:"delivery_stream_arn"`
}

// EventTargetDataStream sends events to a data stream (Kinesis).
type EventTargetDataStream struct {
	Auth      *AWSAuth `json:"auth,omitempty"`
	StreamARN string   `json:"stream_arn"`
}

// EventTargetLogGroup sends events to a log group (CloudWatch Logs).
type EventTargetLogGroup struct {
	Auth        *AWSAuth `json:"auth,omitempty"`
	LogGroupARN string   `json:"log_group_arn"`
}

// AWSAuth has exactly one of role and creds.
type AWSAuth struct {
	Role  *AWSRole  `json:"role,omitempty"`
	Creds *AWSCreds `json:"creds,omitempty"`
}

// AWSRole is a role the service assumes.
type AWSRole struct {
	RoleARN string `json:"role_arn"`
}

// AWSCreds are long-term access keys; SecretAccessKey is a secret.
type AWSCreds struct {
	AccessKeyID     string `json:"access_key_id"`
	SecretAccessKey string `json:"secret_access_key"`
}

// EventTargetObservability sends events to an observability service's logs intake; APIKey
// is a secret.
type EventTargetObservability struct {
	APIKey  string `json:"api_key"`
	Tags    string `json:"tags"`
	Service string `json:"service"`
	Site    string `json:"site"`
}

// EventTargetCloudLogsIngestion sends events to a cloud logs-ingestion endpoint; ClientSecret
// is a secret.
type EventTargetCloudLogsIngestion struct {
	TenantID                 string `json:"tenant_id"`
	ClientID                 string `json:"client_id"`
	ClientSecret             string `json:"client_secret"`
	LogsIngestionURI         string `json:"logs_ingestion_uri"`
	DataCollectionRuleID     string `json:"data_collection_rule_id"`
	DataCollectionStreamName string `json:"data_collection_stream_name"`
}

// EventDestinationCreate is the body of POST /event_destinations.
type EventDestinationCreate struct {
	Description *string      `json:"description,omitempty"`
	Metadata    *string      `json:"metadata,omitempty"`
	Format      *string      `json:"format,omitempty" required:"true"`
	Target      *EventTarget `json:"target,omitempty" required:"true"`
}

// EventDestinationUpdate is the body of PATCH /event_destinations/{id}: a target replaces the
// current one and must be of the same kind.
type EventDestinationUpdate struct {
	ID          *string      `json:"id,omitempty"`
	Description *string      `json:"description,omitempty"`
	Metadata    *string      `json:"metadata,omitempty"`
	Format      *string      `json:"format,omitempty"`
	Target      *EventTarget `json:"target,omitempty"`
}

// EventSubscription names the event types an account sends to its destinations
// (/event_subscriptions, details.md §6.15).
type EventSubscription struct {
	Meta
	Description  string        `json:"description,omitempty"`
	Metadata     string        `json:"metadata,omitempty"`
	Sources      []EventSource `json:"sources"`
	Destinations []Ref         `json:"destinations"`
}

// EventSource is one event type of a subscription; its uri is
// {base}/event_subscriptions/{esb}/sources/{type}.
type EventSource struct {
	Type string `json:"type" enum:"event_type"`
	URI  string `json:"uri"`
}

// EventSourceCreate is one source in a request, and the body of POST .../sources.
type EventSourceCreate struct {
	Type *string `json:"type,omitempty" enum:"event_type"`
}

// EventSourceUpdate is the body of PATCH .../sources/{type}: nothing can change.
type EventSourceUpdate struct{}

// EventSourceList is the answer of GET .../sources.
type EventSourceList struct {
	Sources []EventSource `json:"sources"`
	URI     string        `json:"uri"`
}

// EventSubscriptionCreate is the body of POST /event_subscriptions.
type EventSubscriptionCreate struct {
	Description    *string             `json:"description,omitempty"`
	Metadata       *string             `json:"metadata,omitempty"`
	Sources        []EventSourceCreate `json:"sources,omitzero"`
	DestinationIDs []string            `json:"destination_ids,omitzero"`
}

// EventSubscriptionUpdate is the body of PATCH /event_subscriptions/{id}: sources and
// destination_ids each replace the whole list when given.
type EventSubscriptionUpdate struct {
	ID             *string             `json:"id,omitempty"`
	Description    *string             `json:"description,omitempty"`
	Metadata       *string             `json:"metadata,omitempty"`
	Sources        []EventSourceCreate `json:"sources,omitzero"`
	DestinationIDs []string            `json:"destination_ids,omitzero"`
}

// Event is the JSON document delivered for each event (details.md §9.3).
type Event struct {
	EventID        string          `json:"event_id"`
	EventType      string          `json:"event_type"`
	EventTimestamp string          `json:"event_timestamp"`
	AccountID      string          `json:"account_id"`
	Principal      *EventPrincipal `json:"principal"` // null for traffic events
	Object         json.RawMessage `json:"object"`    // the resource as the API returns it
}

// EventPrincipal is who made an audited change.
type EventPrincipal struct {
	ID         string `json:"id"`      // usr_… or the service user's ID
	Subject    string `json:"subject"` // the user's e-mail or the service user's name
	Source     string `json:"source"`  // "API" or "Dashboard"
	Credential *Ref   `json:"credential"`
}
