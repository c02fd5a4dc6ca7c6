package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ resource.ResourceWithConfigure        = (*eventDestinationResource)(nil)
	_ resource.ResourceWithImportState      = (*eventDestinationResource)(nil)
	_ resource.ResourceWithValidateConfig   = (*eventDestinationResource)(nil)
	_ resource.ResourceWithConfigValidators = (*eventDestinationResource)(nil)
	_ resource.ResourceWithModifyPlan       = (*eventDestinationResource)(nil)
)

// NewEventDestinationResource is warren_event_destination.
func NewEventDestinationResource() resource.Resource {
	return &eventDestinationResource{crud[eventDestinationModel, api.EventDestination]{
		what: "event destination", flattenDiags: flattenEventDestinationResource,
		members: eventTargetRules(),
	}}
}

type eventDestinationResource struct {
	crud[eventDestinationModel, api.EventDestination]
}

// eventDestinationModel is the same in the resource and the data sources; the target object
// differs in type (a data source's has no secrets).
type eventDestinationModel struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Format      types.String `tfsdk:"format"`
	Target      types.Object `tfsdk:"target"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// eventTargetModel is the resource's target: exactly one kind is set. Nested objects are
// pointers (nil is null), so it is read only from a plan or configuration whose objects are
// known.
type eventTargetModel struct {
	DeliveryStream     *eventDeliveryStreamModel `tfsdk:"delivery_stream"`
	DataStream         *eventDataStreamModel     `tfsdk:"data_stream"`
	LogGroup           *eventLogGroupModel       `tfsdk:"log_group"`
	Observability      *eventObservabilityModel  `tfsdk:"observability"`
	CloudLogsIngestion *eventCloudLogsModel      `tfsdk:"cloud_logs_ingestion"`
}

type eventDeliveryStreamModel struct {
	DeliveryStreamARN types.String  `tfsdk:"delivery_stream_arn"`
	Auth              *awsAuthModel `tfsdk:"auth"`
}

type eventDataStreamModel struct {
	StreamARN types.String  `tfsdk:"stream_arn"`
	Auth      *awsAuthModel `tfsdk:"auth"`
}

type eventLogGroupModel struct {
	LogGroupARN types.String  `tfsdk:"log_group_arn"`
	Auth        *awsAuthModel `tfsdk:"auth"`
}

type awsAuthModel struct {
	Role  *awsRoleModel  `tfsdk:"role"`
	Creds *awsCredsModel `tfsdk:"creds"`
}

type awsRoleModel struct {
	RoleARN types.String `tfsdk:"role_arn"`
}

type awsCredsModel struct {
	AccessKeyID              types.String `tfsdk:"access_key_id"`
	SecretAccessKey          types.String `tfsdk:"secret_access_key"`
	SecretAccessKeyWO        types.String `tfsdk:"secret_access_key_wo"`
	SecretAccessKeyWOVersion types.Int64  `tfsdk:"secret_access_key_wo_version"`
}

type eventObservabilityModel struct {
	APIKey          types.String `tfsdk:"api_key"`
	APIKeyWO        types.String `tfsdk:"api_key_wo"`
	APIKeyWOVersion types.Int64  `tfsdk:"api_key_wo_version"`
	Tags            types.String `tfsdk:"tags"`
	Service         types.String `tfsdk:"service"`
	Site            types.String `tfsdk:"site"`
}

type eventCloudLogsModel struct {
	TenantID                 types.String `tfsdk:"tenant_id"`
	ClientID                 types.String `tfsdk:"client_id"`
	ClientSecret             types.String `tfsdk:"client_secret"`
	ClientSecretWO           types.String `tfsdk:"client_secret_wo"`
	ClientSecretWOVersion    types.Int64  `tfsdk:"client_secret_wo_version"`
	LogsIngestionURI         types.String `tfsdk:"logs_ingestion_uri"`
	DataCollectionRuleID     types.String `tfsdk:"data_collection_rule_id"`
	DataCollectionStreamName types.String `tfsdk:"data_collection_stream_name"`
}

// eventSecret is one secret of a target in its three attributes.
type eventSecret struct {
	value, wo *types.String
	version   *types.Int64
}

func (c *awsCredsModel) secret() eventSecret {
	return eventSecret{&c.SecretAccessKey, &c.SecretAccessKeyWO, &c.SecretAccessKeyWOVersion}
}
func (o *eventObservabilityModel) secret() eventSecret {
	return eventSecret{&o.APIKey, &o.APIKeyWO, &o.APIKeyWOVersion}
}
func (c *eventCloudLogsModel) secret() eventSecret {
	return eventSecret{&c.ClientSecret, &c.ClientSecretWO, &c.ClientSecretWOVersion}
}

// The AWS kinds differ only in the name of their resource ARN.
type awsTargetKind struct {
	name, arnMember, service, resourceType, what string
}

var awsTargetKinds = []awsTargetKind{
	{"delivery_stream", "delivery_stream_arn", "firehose", "deliverystream", "a delivery stream (`arn:aws:firehose:REGION:ACCOUNT:deliverystream/NAME`)"},
	{"data_stream", "stream_arn", "kinesis", "stream", "a data stream (`arn:aws:kinesis:REGION:ACCOUNT:stream/NAME`)"},
	{"log_group", "log_group_arn", "logs", "log-group", "a log group (`arn:aws:logs:REGION:ACCOUNT:log-group:NAME`)"},
}

func (r *eventDestinationResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_event_destination"
}

func (r *eventDestinationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	target := member{name: "target", kind: kindObject, required: true, members: eventTargetMembers(),
		desc: "Where the events go: exactly one of `" + strings.Join(rules.EventTargetKinds, "`, `") + "`. Changing the kind forces a new destination; changing the members of the same kind updates it in place."}.resource().(schema.SingleNestedAttribute)
	target.PlanModifiers = []planmodifier.Object{objectplanmodifier.RequiresReplaceIf(targetKindChanged,
		"Changing the target kind forces a new destination.", "Changing the target kind forces a new destination.")}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An event destination: where the account's events (see `warren_event_subscription`) are delivered. " +
			"Each secret (`secret_access_key`, `api_key`, `client_secret`) is given either as a sensitive value kept in state, or write-only as `<name>_wo` (Terraform 1.11+, never stored) with `<name>_wo_version`; change the version to send a new secret. " +
			"The API never returns a secret (it answers `\"\"`), so the state keeps the configured value, and an import leaves every secret null: a secret given as a value (or a `_wo_version`) is then recorded by the next apply, one in-place update that sends it again.",
		Attributes: map[string]schema.Attribute{
			"id":          idAttribute("event destination"),
			"description": descriptionAttribute("destination"),
			"metadata":    metadataAttribute(),
			"format": schema.StringAttribute{
				MarkdownDescription: "The format of the events: `JSON`, in any case (the API keeps the spelling given; a change of case alone is no change).",
				Required:            true,
				PlanModifiers:       []planmodifier.String{planmodifiers.NormalizedString(strings.ToUpper)},
				Validators: []validator.String{validators.String("must be JSON, in any case", func(s string) error {
					return rules.EventFormat(&s)
				})},
			},
			"target":     target,
			"created_at": createdAtAttribute(),
		},
	}
}

// eventTargetMembers are the five target kinds, each an optional object.
func eventTargetMembers() []member {
	out := make([]member, 0, len(rules.EventTargetKinds))
	for _, k := range awsTargetKinds {
		out = append(out, member{name: k.name, kind: kindObject, desc: "Sends events to " + k.what + ".", members: []member{
			{name: k.arnMember, kind: kindString, required: true, desc: "ARN of " + k.what + "; any partition."},
			awsAuthMember(),
		}})
	}
	out = append(out,
		member{name: "observability", kind: kindObject, desc: "Sends events to an observability service's logs intake.", members: append(
			eventSecretMembers("api_key", "API key of the logs intake"),
			member{name: "tags", kind: kindString, desc: "Tags added to every event, e.g. `env:prod,team:edge`. Null when not set."},
			member{name: "service", kind: kindString, desc: "Service name of the events. Null when not set."},
			member{name: "site", kind: kindString, desc: "Site of the logs intake: one of `" + strings.Join(rules.ObservabilitySites, "`, `") + "`. Null (the default site) when not set."},
		)},
		member{name: "cloud_logs_ingestion", kind: kindObject, desc: "Sends events to a cloud logs-ingestion endpoint, with a client-credentials token.", members: append([]member{
			{name: "tenant_id", kind: kindString, required: true, desc: "Directory (tenant) ID, a GUID."},
			{name: "client_id", kind: kindString, required: true, desc: "Application (client) ID, a GUID."},
			{name: "logs_ingestion_uri", kind: kindString, required: true, desc: "The data collection endpoint's logs ingestion URL, `https://…`."},
			{name: "data_collection_rule_id", kind: kindString, required: true, desc: "Immutable ID of the data collection rule, `dcr-` and 32 hex digits."},
			{name: "data_collection_stream_name", kind: kindString, required: true, desc: "The rule's stream, e.g. `Custom-WarrenEvents`."},
		}, eventSecretMembers("client_secret", "client secret of the application")...)},
	)
	return out
}

func awsAuthMember() member {
	return member{name: "auth", kind: kindObject, required: true, desc: "How the service authenticates to AWS: exactly one of `role` and `creds`.", members: []member{
		{name: "role", kind: kindObject, desc: "A role the service assumes.", members: []member{
			{name: "role_arn", kind: kindString, required: true, desc: "ARN of the IAM role (`arn:aws:iam::ACCOUNT:role/NAME`)."},
		}},
		{name: "creds", kind: kindObject, desc: "Long-term access keys.", members: append([]member{
			{name: "access_key_id", kind: kindString, required: true, desc: "The access key ID."},
		}, eventSecretMembers("secret_access_key", "secret access key")...)},
	}}
}

// eventSecretMembers are <name> (sensitive, kept in state as configured), <name>_wo
// (write-only) and <name>_wo_version; exactly one of the first two is required. None is
// shown by the data sources: the API never returns a secret.
func eventSecretMembers(name, what string) []member {
	return []member{
		{name: name, kind: kindString, sensitive: true, inputOnly: true, desc: "The " + what + ". Kept in state (sensitive) as configured: the API never returns it. Exactly one of `" + name + "` and `" + name + "_wo` is required."},
		{name: name + "_wo", kind: kindString, sensitive: true, writeOnly: true, desc: "The " + what + ", write-only (Terraform 1.11+): sent to the server, never stored by Terraform. Change `" + name + "_wo_version` to send a new one."},
		{name: name + "_wo_version", kind: kindInt, inputOnly: true, desc: "Change this number to send `" + name + "_wo` again (an in-place update)."},
	}
}

// eventTargetRules are the rules over which members of the target are set: exactly one
// kind, exactly one auth of an AWS kind, each secret exactly once (value or write-only), a
// version only with the write-only form.
func eventTargetRules() []validators.Members {
	t := path.Root("target")
	kinds := make([]path.Path, len(rules.EventTargetKinds))
	for i, k := range rules.EventTargetKinds {
		kinds[i] = t.AtName(k)
	}
	out := []validators.Members{validators.ExactlyOneOf(kinds...).Within(t)}
	secret := func(at path.Path, name string) {
		out = append(out,
			validators.ExactlyOneOf(path.Root(name), path.Root(name+"_wo")).Under(at),
			validators.AlsoRequires(path.Root(name+"_wo_version"), path.Root(name+"_wo")).Under(at))
	}
	for _, k := range awsTargetKinds {
		auth := t.AtName(k.name).AtName("auth")
		out = append(out, validators.ExactlyOneOf(path.Root("role"), path.Root("creds")).Under(auth))
		secret(auth.AtName("creds"), "secret_access_key")
	}
	secret(t.AtName("observability"), "api_key")
	secret(t.AtName("cloud_logs_ingestion"), "client_secret")
	return out
}

// targetKindChanged: a target of another kind is a new destination (the API refuses to
// change the kind, ERR_5108); a kind known only at apply counts as set.
func targetKindChanged(_ context.Context, req planmodifier.ObjectRequest, resp *objectplanmodifier.RequiresReplaceIfFuncResponse) {
	if !known(req.StateValue) || !known(req.PlanValue) {
		return
	}
	was, now := req.StateValue.Attributes(), req.PlanValue.Attributes()
	for _, k := range rules.EventTargetKinds {
		if was[k].IsNull() != now[k].IsNull() {
			resp.RequiresReplace = true
		}
	}
}

// ValidateConfig runs the server's target rules (ARNs, GUIDs, URL, rule ID, site) at plan
// time once the target's values are known; a secret is checked by the members rules only.
func (r *eventDestinationResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m eventDestinationModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !known(m.Target) {
		return
	}
	var t eventTargetModel
	if m.Target.As(ctx, &t, basetypes.ObjectAsOptions{}).HasError() {
		return // an object known only at apply: the server checks it
	}
	if countKinds(&t) != 1 {
		return // the members rules report it
	}
	unknown := false
	in := expandEventTarget(&t, &unknown, secretPlaceholder)
	checkRule(&resp.Diagnostics, "Invalid event target", !unknown, func() error { return rules.EventTarget(in) })
}

func (r *eventDestinationResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.createFrom(ctx, req, resp, func(ctx context.Context, p planned[eventDestinationModel]) (*api.EventDestination, error) {
		target := eventTargetRequest(ctx, p, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.EventDestinations.Create(ctx, api.EventDestinationCreate{
			Description: optional(p.plan.Description), Metadata: optional(p.plan.Metadata),
			Format: optional(p.plan.Format), Target: target,
		})
	})
}

func (r *eventDestinationResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.updateFrom(ctx, req, resp, func(ctx context.Context, p planned[eventDestinationModel]) (*api.EventDestination, error) {
		target := eventTargetRequest(ctx, p, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return nil, errInvalidPlan
		}
		return r.client.EventDestinations.Update(ctx, p.prior.ID.ValueString(), api.EventDestinationUpdate{
			Description: clearable(p.plan.Description), Metadata: clearable(p.plan.Metadata),
			Format: optional(p.plan.Format), Target: target,
		})
	})
}

// secretPlaceholder stands for a secret while the rules are checked at plan time: whether
// one is given is the members rules' business, and its value has no rule.
func secretPlaceholder(string, eventSecret) string { return "secret" }

// eventTargetRequest is the target to send: the plan's, with each secret from the value or
// the configuration's write-only form (sendSecret).
func eventTargetRequest(ctx context.Context, p planned[eventDestinationModel], diags *diag.Diagnostics) *api.EventTarget {
	var plan, config, prior eventTargetModel
	diags.Append(p.plan.Target.As(ctx, &plan, basetypes.ObjectAsOptions{})...)
	diags.Append(p.config.Target.As(ctx, &config, basetypes.ObjectAsOptions{})...)
	if p.prior != nil && known(p.prior.Target) {
		diags.Append(p.prior.Target.As(ctx, &prior, basetypes.ObjectAsOptions{})...)
	}
	if diags.HasError() {
		return nil
	}
	// The write-only values are only in the configuration; the prior state says whether the
	// server already holds a secret at the same place.
	configSecrets, priorSecrets := config.secrets(), prior.secrets()
	return expandEventTarget(&plan, nil, func(at string, s eventSecret) string {
		var was *eventSecret
		if w, ok := priorSecrets[at]; ok {
			was = &w
		}
		return sendSecret(s, configSecrets[at], was)
	})
}

// sendSecret is the secret a create or PATCH carries: the value; else the write-only one
// when it is new here (no prior secret at this place, or the prior one was a value) or its
// version changed; else "", which keeps the stored secret (a PATCH target replaces the whole
// target, and the server keeps a secret left empty).
func sendSecret(plan, config eventSecret, prior *eventSecret) string {
	if s := optional(*plan.value); s != nil {
		return *s
	}
	if config.wo == nil {
		return ""
	}
	wo := optional(*config.wo)
	if wo == nil {
		return ""
	}
	if prior == nil || !prior.version.Equal(*plan.version) || !prior.value.IsNull() {
		return *wo
	}
	return ""
}

// secrets maps the place of each secret of the target ("delivery_stream",
// "observability" …) to its attributes.
func (t *eventTargetModel) secrets() map[string]eventSecret {
	out := map[string]eventSecret{}
	for name, auth := range map[string]*awsAuthModel{"delivery_stream": t.deliveryStreamAuth(), "data_stream": t.dataStreamAuth(), "log_group": t.logGroupAuth()} {
		if auth != nil && auth.Creds != nil {
			out[name] = auth.Creds.secret()
		}
	}
	if t.Observability != nil {
		out["observability"] = t.Observability.secret()
	}
	if t.CloudLogsIngestion != nil {
		out["cloud_logs_ingestion"] = t.CloudLogsIngestion.secret()
	}
	return out
}

func (t *eventTargetModel) deliveryStreamAuth() *awsAuthModel {
	if t.DeliveryStream == nil {
		return nil
	}
	return t.DeliveryStream.Auth
}

func (t *eventTargetModel) dataStreamAuth() *awsAuthModel {
	if t.DataStream == nil {
		return nil
	}
	return t.DataStream.Auth
}

func (t *eventTargetModel) logGroupAuth() *awsAuthModel {
	if t.LogGroup == nil {
		return nil
	}
	return t.LogGroup.Auth
}

// expandEventTarget is the API's form of a target model (its first kind); secret gives the
// value of the secret at a place ("delivery_stream", "observability" …). unknown, when not
// nil, is set when a value is known only at apply.
func expandEventTarget(t *eventTargetModel, unknown *bool, secret func(at string, s eventSecret) string) *api.EventTarget {
	str := func(v types.String) string {
		if v.IsUnknown() && unknown != nil {
			*unknown = true
		}
		return v.ValueString()
	}
	auth := func(at string, a *awsAuthModel) *api.AWSAuth {
		if a == nil {
			return nil
		}
		out := &api.AWSAuth{}
		if a.Role != nil {
			out.Role = &api.AWSRole{RoleARN: str(a.Role.RoleARN)}
		}
		if a.Creds != nil {
			out.Creds = &api.AWSCreds{AccessKeyID: str(a.Creds.AccessKeyID), SecretAccessKey: secret(at, a.Creds.secret())}
		}
		return out
	}
	out := &api.EventTarget{}
	switch {
	case t.DeliveryStream != nil:
		out.DeliveryStream = &api.EventTargetDeliveryStream{Auth: auth("delivery_stream", t.DeliveryStream.Auth), DeliveryStreamARN: str(t.DeliveryStream.DeliveryStreamARN)}
	case t.DataStream != nil:
		out.DataStream = &api.EventTargetDataStream{Auth: auth("data_stream", t.DataStream.Auth), StreamARN: str(t.DataStream.StreamARN)}
	case t.LogGroup != nil:
		out.LogGroup = &api.EventTargetLogGroup{Auth: auth("log_group", t.LogGroup.Auth), LogGroupARN: str(t.LogGroup.LogGroupARN)}
	case t.Observability != nil:
		o := t.Observability
		out.Observability = &api.EventTargetObservability{APIKey: secret("observability", o.secret()), Tags: str(o.Tags), Service: str(o.Service), Site: str(o.Site)}
	case t.CloudLogsIngestion != nil:
		c := t.CloudLogsIngestion
		out.CloudLogsIngestion = &api.EventTargetCloudLogsIngestion{
			TenantID: str(c.TenantID), ClientID: str(c.ClientID), ClientSecret: secret("cloud_logs_ingestion", c.secret()),
			LogsIngestionURI: str(c.LogsIngestionURI), DataCollectionRuleID: str(c.DataCollectionRuleID),
			DataCollectionStreamName: str(c.DataCollectionStreamName),
		}
	}
	return out
}

func countKinds(t *eventTargetModel) int {
	n := 0
	for _, set := range []bool{t.DeliveryStream != nil, t.DataStream != nil, t.LogGroup != nil, t.Observability != nil, t.CloudLogsIngestion != nil} {
		if set {
			n++
		}
	}
	return n
}

// flattenEventTarget maps the API's target onto the resource's model. The API answers every
// secret as "": the state keeps the prior value, version and form of a secret that is still
// at the same place (same kind, creds still creds), null otherwise (import, data sources).
func flattenEventTarget(t *api.EventTarget, prior *eventTargetModel) eventTargetModel {
	if prior == nil {
		prior = &eventTargetModel{}
	}
	priorSecrets := prior.secrets()
	keep := func(at string, s eventSecret) {
		if was, ok := priorSecrets[at]; ok {
			*s.value, *s.version = *was.value, *was.version
		} else {
			*s.value, *s.version = types.StringNull(), types.Int64Null()
		}
		*s.wo = types.StringNull()
	}
	auth := func(at string, a *api.AWSAuth) *awsAuthModel {
		if a == nil {
			return nil
		}
		out := &awsAuthModel{}
		if a.Role != nil {
			out.Role = &awsRoleModel{RoleARN: types.StringValue(a.Role.RoleARN)}
		}
		if a.Creds != nil {
			out.Creds = &awsCredsModel{AccessKeyID: types.StringValue(a.Creds.AccessKeyID)}
			keep(at, out.Creds.secret())
		}
		return out
	}
	var out eventTargetModel
	switch {
	case t.DeliveryStream != nil:
		out.DeliveryStream = &eventDeliveryStreamModel{DeliveryStreamARN: types.StringValue(t.DeliveryStream.DeliveryStreamARN), Auth: auth("delivery_stream", t.DeliveryStream.Auth)}
	case t.DataStream != nil:
		out.DataStream = &eventDataStreamModel{StreamARN: types.StringValue(t.DataStream.StreamARN), Auth: auth("data_stream", t.DataStream.Auth)}
	case t.LogGroup != nil:
		out.LogGroup = &eventLogGroupModel{LogGroupARN: types.StringValue(t.LogGroup.LogGroupARN), Auth: auth("log_group", t.LogGroup.Auth)}
	case t.Observability != nil:
		o, was := t.Observability, prior.Observability
		if was == nil {
			was = &eventObservabilityModel{}
		}
		out.Observability = &eventObservabilityModel{
			Tags: emptyAsNull(o.Tags, was.Tags), Service: emptyAsNull(o.Service, was.Service), Site: emptyAsNull(o.Site, was.Site),
		}
		keep("observability", out.Observability.secret())
	case t.CloudLogsIngestion != nil:
		c := t.CloudLogsIngestion
		out.CloudLogsIngestion = &eventCloudLogsModel{
			TenantID: types.StringValue(c.TenantID), ClientID: types.StringValue(c.ClientID),
			LogsIngestionURI: types.StringValue(c.LogsIngestionURI), DataCollectionRuleID: types.StringValue(c.DataCollectionRuleID),
			DataCollectionStreamName: types.StringValue(c.DataCollectionStreamName),
		}
		keep("cloud_logs_ingestion", out.CloudLogsIngestion.secret())
	}
	return out
}

// eventTargetTypes are the attribute types of the resource's target.
func eventTargetTypes() map[string]attr.Type {
	return member{kind: kindObject, members: eventTargetMembers()}.resource().GetType().(basetypes.ObjectType).AttrTypes
}

// flattenEventDestination maps the API's destination onto m (the plan's or the state's
// model); data says m is a data source's, whose target has no secrets.
func flattenEventDestination(ctx context.Context, d *api.EventDestination, m *eventDestinationModel, data bool) diag.Diagnostics {
	var diags diag.Diagnostics
	var prior *eventTargetModel
	if !data && known(m.Target) {
		prior = new(eventTargetModel)
		diags.Append(m.Target.As(ctx, prior, basetypes.ObjectAsOptions{})...)
	}
	target, ds := types.ObjectValueFrom(ctx, eventTargetTypes(), flattenEventTarget(&d.Target, prior))
	diags.Append(ds...)
	if data {
		target = onlyTypes(target, eventTargetDataAttribute().GetType().(basetypes.ObjectType), &diags)
	}
	m.ID = types.StringValue(d.ID)
	m.Description = emptyAsNull(d.Description, m.Description)
	m.Metadata = emptyAsNull(d.Metadata, m.Metadata)
	m.Format = types.StringValue(d.Format)
	m.Target = target
	m.CreatedAt = types.StringValue(d.CreatedAt)
	return diags
}

func flattenEventDestinationResource(ctx context.Context, d *api.EventDestination, m *eventDestinationModel) diag.Diagnostics {
	return flattenEventDestination(ctx, d, m, false)
}

func flattenEventDestinationData(ctx context.Context, d *api.EventDestination, m *eventDestinationModel) diag.Diagnostics {
	return flattenEventDestination(ctx, d, m, true)
}

func eventTargetDataAttribute() dschema.SingleNestedAttribute {
	return member{kind: kindObject, members: eventTargetMembers(),
		desc: "Where the events go: one of `" + strings.Join(rules.EventTargetKinds, "`, `") + "` is set. Secrets are not shown: the API never returns them."}.data().(dschema.SingleNestedAttribute)
}
