package provider

import (
	"context"
	"errors"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

// What every resource repeats lives here, so that a resource file is its schema and its
// mapping: the create/read/update/delete round trips (read back after write, a 404 on read
// removes the resource from state), import by ID, and the crud a resource embeds.

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

// crud is what every resource's Configure, Read, Delete and ImportState do; a resource embeds
// it, declares how to get, delete and map its object, and writes only Metadata, Schema,
// Create and Update (and its validators) itself.
type crud[M any, T any] struct {
	client *client.Client
	what   string          // for messages, e.g. "API key"
	id     func(*M) string // nil: the model's ID field (objectID)
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

// objectID is the object's ID in the model: r.id, else the model's ID field (tfsdk "id"),
// which every model but a route's (edge_id/route_id) has.
func (r *crud[M, T]) objectID(m *M) string {
	if r.id != nil {
		return r.id(m)
	}
	return reflect.ValueOf(m).Elem().FieldByName("ID").Interface().(types.String).ValueString()
}

// getter and deleter are the client's calls for the object: get and del, else those of the
// client's collection of T.
func (r *crud[M, T]) getter() getFunc[T] {
	if r.get != nil {
		return r.get(r.client)
	}
	return getOf[T](r.client)
}

func (r *crud[M, T]) deleter() func(context.Context, string) error {
	if r.del != nil {
		return r.del(r.client)
	}
	return deleteOf[T](r.client)
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
	updateResource(ctx, req, resp, r.what, r.objectID, withConfig, func(ctx context.Context, p planned[M]) (*T, error) {
		if err := r.modules.remove(ctx, r.client, r.what, r.objectID(p.prior), p.plan, p.prior); err != nil {
			return nil, err
		}
		return call(ctx, p)
	}, r.mapping(), r.getter())
}

func (r *crud[M, T]) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *crud[M, T]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readResource(ctx, req, resp, r.what, r.objectID, r.getter(), r.mapping())
}

func (r *crud[M, T]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	deleteResource(ctx, req, resp, r.what, r.objectID, r.deleter())
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
// as soon as the configuration differs from the state, before the plan modifiers (package
// planmodifiers) put the state's spelling back; when nothing else differs, those unknowns are the
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
