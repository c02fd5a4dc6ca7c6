package provider

import (
	"context"
	"errors"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/planmodifiers"
)

// What the edge resources share: their hostports. The API lowercases the host and writes the
// port in decimal, so a hostport is compared in that form: the state keeps the configured
// spelling, and a spelling that differs only so is no change.

// edgeFields are what every edge's model has besides its modules (and an HTTPS edge's routes).
type edgeFields struct {
	ID          types.String `tfsdk:"id"`
	Description types.String `tfsdk:"description"`
	Metadata    types.String `tfsdk:"metadata"`
	Hostports   types.List   `tfsdk:"hostports"`
	CreatedAt   types.String `tfsdk:"created_at"`
}

// set maps what the API answered of these fields, keeping the spellings of the plan or state
// that mean the same.
func (f *edgeFields) set(meta api.Meta, description, metadata string, hostports []string) {
	f.ID = types.StringValue(meta.ID)
	f.Description = emptyAsNull(description, f.Description)
	f.Metadata = emptyAsNull(metadata, f.Metadata)
	f.Hostports = hostportsValue(hostports, f.Hostports)
	f.CreatedAt = types.StringValue(meta.CreatedAt)
}

// edgeAttributes are the attributes every edge resource has besides its modules; what names
// the edge in the ID's description.
func edgeAttributes(what string, hostports schema.ListAttribute) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"id":          idAttribute(what),
		"description": descriptionAttribute("edge"),
		"metadata":    metadataAttribute(),
		"hostports":   hostports,
		"created_at":  createdAtAttribute(),
	}
}

// edgeDataAttributes are the TCP and TLS edges' data source attributes besides their modules.
func edgeDataAttributes(hostports string) map[string]dschema.Attribute {
	return map[string]dschema.Attribute{
		"description": computedString("What the edge is for; null when not set."),
		"metadata":    computedString("User data; null when not set."),
		"hostports":   computedStringList(hostports),
		"created_at":  computedString("When the edge was created (RFC 3339)."),
	}
}

// hostportsAttribute is an edge's `hostports`: Optional with default [] (unset means none,
// so removing them from the configuration removes them on the server), each element checked
// by rules.Hostport at plan time.
func hostportsAttribute(desc string) schema.ListAttribute {
	return schema.ListAttribute{
		MarkdownDescription: desc + " Written `hostname:port`; the host is case-insensitive. Defaults to none (`[]`).",
		ElementType:         types.StringType,
		Optional:            true,
		Computed:            true,
		Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, []attr.Value{})),
		Validators:          []validator.List{hostportsValidator{}},
		PlanModifiers:       []planmodifier.List{planmodifiers.NormalizedStrings(hostportKey)},
	}
}

// hostportKey is a hostport as the API stores it; a malformed one stays as given.
func hostportKey(s string) string {
	host, port, err := rules.Hostport(s)
	if err != nil {
		return s
	}
	return host + ":" + strconv.Itoa(port)
}

// hostportsValue maps the API's hostports, keeping the configured spelling when it means the
// same.
func hostportsValue(api []string, configured types.List) types.List {
	if known(configured) && sameStringsAs(hostportKey, stringsOf(configured), api) {
		return configured
	}
	return stringList(api)
}

// sameStringsAs says two lists are equal element by element once normalised.
func sameStringsAs(normalize func(string) string, a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if normalize(a[i]) != normalize(b[i]) {
			return false
		}
	}
	return true
}

// hostportsValidator checks each known hostport (ERR_7104, ERR_7112) and that none is listed
// twice (ERR_215), as the server does.
type hostportsValidator struct{}

func (hostportsValidator) Description(context.Context) string {
	return "each hostport is hostname:port with a port from 1 to 65535, listed once"
}
func (v hostportsValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (hostportsValidator) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	seen := map[string]bool{}
	for i, e := range req.ConfigValue.Elements() {
		s, ok := e.(types.String)
		if !ok || !known(s) {
			continue // known at apply: the server checks it
		}
		at := req.Path.AtListIndex(i)
		if _, _, err := rules.Hostport(s.ValueString()); err != nil {
			msg := err.Error()
			var v *rules.Violation
			if errors.As(err, &v) {
				msg = v.Msg
			}
			resp.Diagnostics.AddAttributeError(at, "Invalid hostport", msg)
			continue
		}
		key := hostportKey(s.ValueString())
		if seen[key] {
			resp.Diagnostics.AddAttributeError(at, "Duplicate hostport", "The hostport "+rules.Quote(s.ValueString())+" is listed more than once.")
		}
		seen[key] = true
	}
}

// moduleEdge is what the TCP and TLS edges do alike: create and update with a body of the
// edge's fields and every module the plan has (a PATCH keeps the others; removed ones are
// deleted by the crud), and map the API's edge back. M is the model, In the request, T the
// API's edge.
type moduleEdge[M, In, T any] struct {
	crud[M, T]
	slots moduleSlots[M, In, T]
	// request is the body with the edge's own fields; fields are the model's.
	request func(description, metadata *string, hostports []string) In
	fields  func(*M) *edgeFields
}

// edgeWriter is the client's collection of an edge (client.Collection).
type edgeWriter[In, T any] interface {
	Create(context.Context, In) (*T, error)
	Update(context.Context, string, In) (*T, error)
}

// newModuleEdge declares an edge: what for messages, its modules, its request and how its
// API object and model hold the edge's fields.
func newModuleEdge[M, In, T any](what string, slots moduleSlots[M, In, T], del func(*client.Client) moduleDeleter, request func(description, metadata *string, hostports []string) In, fields func(*M) *edgeFields, apiFields func(*T) (api.Meta, string, string, []string)) moduleEdge[M, In, T] {
	return moduleEdge[M, In, T]{
		crud: crud[M, T]{
			what: what, flattenDiags: flattenEdge(slots, fields, apiFields, false),
			modules: slots.owned(func(c *client.Client, _ *M) moduleDeleter { return del(c) }),
			members: slots.memberRules(),
		},
		slots: slots, request: request, fields: fields,
	}
}

func (r *moduleEdge[M, In, T]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.createFrom(ctx, req, resp, func(ctx context.Context, p planned[M]) (*T, error) {
		in, ok := r.expand(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return collectionOf[T](r.client).(edgeWriter[In, T]).Create(ctx, in)
	})
}

func (r *moduleEdge[M, In, T]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.updateFrom(ctx, req, resp, func(ctx context.Context, p planned[M]) (*T, error) {
		in, ok := r.expand(ctx, p, &resp.Diagnostics)
		if !ok {
			return nil, errInvalidPlan
		}
		return collectionOf[T](r.client).(edgeWriter[In, T]).Update(ctx, r.fields(p.prior).ID.ValueString(), in)
	})
}

// expand is the body of a create or PATCH.
func (r *moduleEdge[M, In, T]) expand(ctx context.Context, p planned[M], diags *diag.Diagnostics) (In, bool) {
	f := r.fields(p.plan)
	in := r.request(clearable(f.Description), clearable(f.Metadata), stringsOf(f.Hostports))
	r.slots.expand(ctx, p.plan, p.config, &in, diags)
	return in, !diags.HasError()
}

// flattenEdge maps an edge onto the resource's model (data false) or a data source's.
func flattenEdge[M, In, T any](slots moduleSlots[M, In, T], fields func(*M) *edgeFields, apiFields func(*T) (api.Meta, string, string, []string), data bool) flattenFunc[T, M] {
	return func(ctx context.Context, e *T, m *M) (diags diag.Diagnostics) {
		fields(m).set(apiFields(e))
		slots.flatten(ctx, e, m, data, &diags)
		return diags
	}
}
