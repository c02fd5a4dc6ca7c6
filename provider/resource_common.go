package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

// What every resource repeats lives here, so that a resource file is its schema and its
// mapping: getting the client, the create/read/update/delete round trips (read back after
// write, a 404 on read removes the resource from state), API errors as diagnostics, import
// by ID, and the attributes every object has.

// clientFrom returns the provider's client from ProviderData (nil before configuration).
func clientFrom(providerData any, diags *diag.Diagnostics) *client.Client {
	if providerData == nil {
		return nil
	}
	c, ok := providerData.(*client.Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *client.Client, got %T. This is a bug in the provider.", providerData))
	}
	return c
}

// addAPIError reports a failed API call. When the API names the member at fault
// (details.param, e.g. `tls.enabled`) and s (the schema of the plan, state or config at hand;
// nil when there is none) has that attribute, the error is reported on the attribute.
func addAPIError(ctx context.Context, diags *diag.Diagnostics, s schemaTypes, action string, err error) {
	summary := "Could not " + action
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		summary = "Warren API error: could not " + action
		if p, ok := attributePath(ctx, s, apiErr.Body.Details["param"]); ok {
			// err, not apiErr: it also says why retries stopped.
			diags.AddAttributeError(p, summary, err.Error())
			return
		}
	}
	diags.AddError(summary, err.Error())
}

// schemaTypes is what attributePath needs of a schema (tfsdk.Plan.Schema and the like).
type schemaTypes interface {
	TypeAtPath(context.Context, path.Path) (attr.Type, diag.Diagnostics)
}

// attributePath maps an API member path ("tls.enabled", "provider.github.teams",
// "backends.2", "headers[x-a]") onto the schema: the deepest attribute it names, so an index
// or map key lands on its list or map. False when its first member is no attribute.
func attributePath(ctx context.Context, s schemaTypes, param string) (path.Path, bool) {
	if s == nil || param == "" {
		return path.Empty(), false
	}
	p, found := path.Empty(), false
	for _, name := range strings.FieldsFunc(param, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
		next := p.AtName(name)
		if _, d := s.TypeAtPath(ctx, next); d.HasError() {
			break
		}
		p, found = next, true
	}
	return p, found
}

// apiCall runs one API call between two debug lines (tflog) that say what is called and
// how long it took: method, family and ID, never a body or a secret, and on failure only
// the HTTP status and error code (a message may quote the input).
func apiCall[T any](ctx context.Context, method, family, id string, call func(context.Context) (T, error)) (T, error) {
	fields := map[string]any{"method": method, "family": family}
	if id != "" {
		fields["id"] = id
	}
	tflog.Debug(ctx, "Warren API call", fields)
	start := time.Now()
	out, err := call(ctx)
	fields["duration_ms"] = time.Since(start).Milliseconds()
	var apiErr *client.Error
	switch {
	case errors.As(err, &apiErr):
		fields["http_status"] = apiErr.HTTPStatus
		if code := apiErr.Code(); code != "" {
			fields["error_code"] = code
		}
	case err != nil:
		fields["failed"] = true
	}
	tflog.Debug(ctx, "Warren API call done", fields)
	return out, err
}

// apiDelete is apiCall for calls that return nothing but an error.
func apiDelete(ctx context.Context, family, id string, del func(context.Context, string) error) error {
	_, err := apiCall(ctx, "delete", family, id, func(ctx context.Context) (struct{}, error) { return struct{}{}, del(ctx, id) })
	return err
}

// errInvalidPlan ends a create or update call before it reaches the API: expanding the plan
// into a request failed, and the diagnostics already say why.
var errInvalidPlan = errors.New("the plan could not be turned into a request")

// flattenFunc maps an API object onto a model. Its diagnostics are those of building module
// values (module.value); a flatten that cannot fail is adapted with noDiags.
type flattenFunc[T, M any] func(context.Context, *T, *M) diag.Diagnostics

// noDiags adapts a flatten that cannot fail.
func noDiags[T, M any](f func(*T, *M)) flattenFunc[T, M] {
	return func(_ context.Context, t *T, m *M) diag.Diagnostics { f(t, m); return nil }
}

// planned is what a create or update call works from: the plan, the configuration (which
// alone holds write-only values such as `<secret>_wo`; nil unless the call asked for it) and,
// on update, the prior state.
type planned[M any] struct {
	plan, config, prior *M
}

// configOf reads the configuration into a model when withConfig says the call needs it: each
// Get is the framework's reflection over the model (a quarter of what a create costs the
// provider for a small resource), so calls that work from the plan alone skip it.
func configOf[M any](ctx context.Context, config tfsdk.Config, withConfig bool, diags *diag.Diagnostics) *M {
	if !withConfig {
		return nil
	}
	m := new(M)
	diags.Append(config.Get(ctx, m)...)
	return m
}

// createResource reads the plan (and the configuration when withConfig) into models, calls
// create, maps the answer back and saves the state.
func createResource[M any, T any](ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, what string, withConfig bool, create func(context.Context, planned[M]) (*T, error), flatten flattenFunc[T, M]) {
	var m M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	config := configOf[M](ctx, req.Config, withConfig, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, err := apiCall(ctx, "create", what, "", func(ctx context.Context) (*T, error) { return create(ctx, planned[M]{plan: &m, config: config}) })
	if errors.Is(err, errInvalidPlan) {
		return
	}
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.Plan.Schema, "create "+what, err)
		return
	}
	resp.Diagnostics.Append(flatten(ctx, obj, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// readResource refreshes the state from the API; an object deleted behind Terraform's back
// is removed from state so that the next plan creates it again.
func readResource[M any, T any](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, what string, id func(*M) string, get func(context.Context, string) (*T, error), flatten flattenFunc[T, M]) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, err := apiCall(ctx, "get", what, id(&m), func(ctx context.Context) (*T, error) { return get(ctx, id(&m)) })
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.State.Schema, "read "+what, err)
		return
	}
	resp.Diagnostics.Append(flatten(ctx, obj, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// updateResource sends the plan as a PATCH; prior is the state before the update (for IDs
// and values the API does not return again, such as tokens). An update may take several
// calls (modules removed, then the PATCH): when one fails, reread (nil: none) fetches the
// object again so that the state holds what the earlier calls changed, not the prior state.
func updateResource[M any, T any](ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, what string, id func(*M) string, withConfig bool, update func(context.Context, planned[M]) (*T, error), flatten flattenFunc[T, M], reread getFunc[T]) {
	var plan, prior M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	config := configOf[M](ctx, req.Config, withConfig, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	obj, err := apiCall(ctx, "update", what, id(&prior), func(ctx context.Context) (*T, error) {
		return update(ctx, planned[M]{plan: &plan, config: config, prior: &prior})
	})
	if err != nil {
		if !errors.Is(err, errInvalidPlan) { // else the diagnostics say why
			addAPIError(ctx, &resp.Diagnostics, req.Plan.Schema, "update "+what, err)
		}
		if reread == nil {
			return // the framework keeps the prior state
		}
		obj, err := apiCall(ctx, "get", what, id(&prior), func(ctx context.Context) (*T, error) { return reread(ctx, id(&prior)) })
		if err != nil {
			return // nothing better known than the prior state
		}
		resp.Diagnostics.Append(flatten(ctx, obj, &prior)...)
		resp.Diagnostics.Append(resp.State.Set(ctx, &prior)...)
		return
	}
	resp.Diagnostics.Append(flatten(ctx, obj, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// deleteResource deletes the object; one that is already gone is fine.
func deleteResource[M any](ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse, what string, id func(*M) string, del func(context.Context, string) error) {
	var m M
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := apiDelete(ctx, what, id(&m), del); err != nil && !client.IsNotFound(err) {
		addAPIError(ctx, &resp.Diagnostics, req.State.Schema, "delete "+what, err)
	}
}

// importByID imports an object by its ID; Read fills in the rest.
func importByID(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// Attributes every object has.

func idAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "ID of the " + what + ".",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

func createdAtAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "When the object was created (RFC 3339).",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// descriptionAttribute is optional and updates in place. Like every optional string the API
// omits when empty, it is null in state when not set (see emptyAsNull).
func descriptionAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("What the %s is for; at most %d bytes. Null when not set; `\"\"` means the same to the API.", what, rules.MaxDescriptionBytes),
		Optional:            true,
		Validators:          []validator.String{validators.MaxBytes(rules.MaxDescriptionBytes)},
	}
}

func metadataAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("Arbitrary user data, e.g. JSON; at most %d bytes. Null when not set; `\"\"` means the same to the API.", rules.MaxMetadataBytes),
		Optional:            true,
		Validators:          []validator.String{validators.MaxBytes(rules.MaxMetadataBytes)},
	}
}

// ownerAttribute is the principal that owns a key or credential; it cannot change.
func ownerAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "ID of the user (`usr_…`) or service user (`service_…`) that owns it. Defaults to the owner of the provider's API key; only admins may name another owner. Changing it forces a new object.",
		Optional:            true,
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()},
		// The API also takes a user's email, but answers with the ID: state would never match.
		Validators: []validator.String{validators.String("must be a user ID (usr_…) or a service user ID (service_…)", func(s string) error {
			if ids.Valid(s, ids.User) || ids.Valid(s, ids.ServiceUser) {
				return nil
			}
			return fmt.Errorf("%q must be a user ID (usr_…) or a service user ID (service_…)", s)
		})},
	}
}

// tokenAttribute is a token the API returns only when it creates the object: kept in state
// from then on, null after an import.
func tokenAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The " + what + " token. The API returns it only when it creates the object, so it is kept in state (sensitive) from then on; it cannot be recovered after an import (it is then null). To keep it out of state, use the ephemeral resource of the same name.",
		Computed:            true,
		Sensitive:           true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// Values the API normalises (domain case, IPv6 CIDRs, header names) keep the state's
// spelling in the plan when the configured one means the same: Terraform accepts a planned
// value equal to the prior state in place of the configured one. Flatten keeps the configured
// spelling on create, so this matters after an import, whose state holds the API's spelling.

// sameString keeps the state's string when both normalise alike.
func sameString(normalize func(string) string) planmodifier.String {
	return sameStringModifier(normalize)
}

type sameStringModifier func(string) string

func (m sameStringModifier) Description(context.Context) string {
	return "A value that means the same as the one in state (e.g. differs only in case) is no change."
}
func (m sameStringModifier) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}
func (m sameStringModifier) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if known(req.StateValue) && known(req.PlanValue) && m(req.StateValue.ValueString()) == m(req.PlanValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// sameMap keeps the state's map of strings when same says both mean the same.
func sameMap(same func(a, b map[string]string) bool) planmodifier.Map { return sameMapModifier(same) }

type sameMapModifier func(a, b map[string]string) bool

func (m sameMapModifier) Description(context.Context) string {
	return "A value that means the same as the one in state (e.g. differs only in case) is no change."
}
func (m sameMapModifier) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }
func (m sameMapModifier) PlanModifyMap(_ context.Context, req planmodifier.MapRequest, resp *planmodifier.MapResponse) {
	if known(req.StateValue) && allKnown(req.PlanValue) && m(stringMapOf(req.StateValue), stringMapOf(req.PlanValue)) {
		resp.PlanValue = req.StateValue
	}
}

func known(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }

// allKnown says a map is known down to its values.
func allKnown(v types.Map) bool {
	if !known(v) {
		return false
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

// mapForRule prepares a map for a rule checked at plan time, where some values may be known
// only after apply (another resource's attribute, a variable under validate): such a value
// stands for a valid one (stand), so the keys and the count are still checked now and the
// value once it is known (by the server). Null values are left out.
func mapForRule[T any](v types.Map, stand T, value func(attr.Value) T) map[string]T {
	out := make(map[string]T, len(v.Elements()))
	for k, e := range v.Elements() {
		switch {
		case e.IsUnknown():
			out[k] = stand
		case !e.IsNull():
			out[k] = value(e)
		}
	}
	return out
}

// stringOf is the string of a known types.String element.
func stringOf(v attr.Value) string {
	s, _ := v.(types.String)
	return s.ValueString()
}

// Mapping helpers between API values and framework values.

// optional returns a pointer to v's string for a request, nil when null or unknown.
func optional(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

// clearable is an optional string for an update: null (no longer set) sends "", which
// clears the value, while an omitted member would keep it.
func clearable(v types.String) *string {
	if v.IsNull() {
		return new(string)
	}
	return optional(v)
}

// emptyAsNull maps an optional string of the API, which omits empty ones: null in state,
// unless the configuration says "" (kept, so `description = ""` never shows a diff either).
func emptyAsNull(v string, configured types.String) types.String {
	if v == "" && !configured.Equal(types.StringValue("")) {
		return types.StringNull()
	}
	return types.StringValue(v)
}

// stringsOf returns the elements of a list of strings; nil when null or unknown. Called at
// apply time, when every element is known.
func stringsOf(v types.List) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make([]string, 0, len(v.Elements()))
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// stringList returns a list value of strings, [] for none.
func stringList(items []string) types.List {
	values := make([]attr.Value, 0, len(items))
	for _, s := range items {
		values = append(values, types.StringValue(s))
	}
	return types.ListValueMust(types.StringType, values)
}

// addViolation reports a broken rule of internal/rules on the attribute it names (a member
// path such as "tls.enabled" under at, the root for a resource's own rules).
func addViolation(diags *diag.Diagnostics, summary string, err error) {
	addViolationAt(diags, path.Empty(), summary, err)
}

func addViolationAt(diags *diag.Diagnostics, at path.Path, summary string, err error) {
	var v *rules.Violation
	if errors.As(err, &v) && v.Field != "" {
		for _, name := range strings.Split(v.Field, ".") {
			at = at.AtName(name)
		}
		diags.AddAttributeError(at, summary, v.Msg)
		return
	}
	if len(at.Steps()) > 0 {
		diags.AddAttributeError(at, summary, err.Error())
		return
	}
	diags.AddError(summary, err.Error())
}

// stringMap returns a map value of strings, {} for none.
func stringMap(items map[string]string) types.Map {
	values := make(map[string]attr.Value, len(items))
	for k, v := range items {
		values[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, values)
}

// stringMapOf returns the entries of a known map of strings; nil when null or unknown.
func stringMapOf(v types.Map) map[string]string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := make(map[string]string, len(v.Elements()))
	for k, e := range v.Elements() {
		out[k] = e.(types.String).ValueString()
	}
	return out
}

// checkRule reports a rule of internal/rules at plan time once every value it needs is
// known (known is false while some value is still unknown).
func checkRule(diags *diag.Diagnostics, summary string, known bool, rule func() error) {
	if !known {
		return
	}
	if err := rule(); err != nil {
		addViolation(diags, summary, err)
	}
}

// crud is what every resource's Configure, Read, Delete and ImportState do; a resource embeds
// it, declares how to get, delete and map its object, and writes only Metadata, Schema,
// Create and Update (and its validators) itself.
type crud[M any, T any] struct {
	client *client.Client
	what   string // for messages, e.g. "API key"
	id     func(*M) string
	get    func(*client.Client) getFunc[T]
	del    func(*client.Client) func(context.Context, string) error
	// flatten maps the API object onto the model; flattenDiags, when set, is used instead,
	// for a mapping that reports diagnostics (module values).
	flatten      func(*T, *M)
	flattenDiags flattenFunc[T, M]
	// members are the rules over which attributes are set (conflicts, exactly one of …),
	// checked by ValidateConfig and, with unknown values counted as set, by ModifyPlan.
	members []validators.Members
	// modules are the owner's modules (edges, routes): update DELETEs each one the prior
	// state has and the plan no longer has, before its PATCH (which keeps omitted modules).
	modules ownedModules[M]
}

// mapping is the resource's flatten, with diagnostics.
func (r *crud[M, T]) mapping() flattenFunc[T, M] {
	if r.flattenDiags != nil {
		return r.flattenDiags
	}
	return noDiags(r.flatten)
}

// create reads the plan, calls the API and saves what it answered.
func (r *crud[M, T]) create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, call func(context.Context, *M) (*T, error)) {
	createResource(ctx, req, resp, r.what, false, func(ctx context.Context, p planned[M]) (*T, error) { return call(ctx, p.plan) }, r.mapping())
}

// createFrom is create for a call that also needs the configuration (write-only values).
func (r *crud[M, T]) createFrom(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, call func(context.Context, planned[M]) (*T, error)) {
	createResource(ctx, req, resp, r.what, true, call, r.mapping())
}

// update sends the plan (prior is the state before it) and saves what the API answered.
func (r *crud[M, T]) update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, call func(ctx context.Context, plan, prior *M) (*T, error)) {
	r.updateWith(ctx, req, resp, false, func(ctx context.Context, p planned[M]) (*T, error) { return call(ctx, p.plan, p.prior) })
}

// updateFrom is update for a call that also needs the configuration. The modules removed
// from the configuration are deleted first (a module being replaced by another, e.g. one
// auth module by the next, must go before the PATCH adds its successor); when a call fails,
// the state is read back from the API, so it holds what the calls before it changed.
func (r *crud[M, T]) updateFrom(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, call func(context.Context, planned[M]) (*T, error)) {
	r.updateWith(ctx, req, resp, true, call)
}

func (r *crud[M, T]) updateWith(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, withConfig bool, call func(context.Context, planned[M]) (*T, error)) {
	var reread getFunc[T]
	if r.get != nil {
		reread = r.get(r.client)
	}
	updateResource(ctx, req, resp, r.what, r.id, withConfig, func(ctx context.Context, p planned[M]) (*T, error) {
		if err := r.modules.remove(ctx, r.client, r.what, r.id(p.prior), p.plan, p.prior); err != nil {
			return nil, err
		}
		return call(ctx, p)
	}, r.mapping(), reread)
}

func (r *crud[M, T]) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *crud[M, T]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readResource(ctx, req, resp, r.what, r.id, r.get(r.client), r.mapping())
}

func (r *crud[M, T]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteResource(ctx, req, resp, r.what, r.id, r.del(r.client))
}

func (r *crud[M, T]) ConfigValidators(context.Context) []resource.ConfigValidator {
	out := make([]resource.ConfigValidator, len(r.members))
	for i, m := range r.members {
		out[i] = m
	}
	return out
}

// ModifyPlan fails a plan whose set attributes break a members rule, also when a value is
// known only after apply (it is then set, just not yet known), so nothing is half-applied.
func (r *crud[M, T]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() { // destroy
		return
	}
	for _, m := range r.members {
		resp.Diagnostics.Append(m.Check(ctx, req.Config, true)...)
	}
	if !req.State.Raw.IsNull() {
		keepStateWhenUnchanged(req, resp)
	}
}

// keepStateWhenUnchanged plans no change when the configuration only spells normalised
// values differently from the state. The framework marks unset computed attributes unknown
// as soon as the configuration differs from the state, before the plan modifiers (sameString,
// sameMap) put the state's spelling back; when nothing else differs, those unknowns are the
// state's values again.
func keepStateWhenUnchanged(req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan, config, state map[string]tftypes.Value
	if resp.Plan.Raw.As(&plan) != nil || req.Config.Raw.As(&config) != nil || req.State.Raw.As(&state) != nil {
		return
	}
	// A new map: As shares the plan's own, which must stay as it is.
	candidate := make(map[string]tftypes.Value, len(plan))
	for name, v := range plan {
		candidate[name] = v
		if !v.IsKnown() && config[name].IsNull() {
			candidate[name] = state[name]
		}
	}
	if tftypes.NewValue(resp.Plan.Raw.Type(), candidate).Equal(req.State.Raw) {
		resp.Plan.Raw = req.State.Raw.Copy()
	}
}

func (r *crud[M, T]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByID(ctx, req, resp)
}
