package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// Data sources come in two shapes that every family repeats: one object by ID, and a list
// with an optional CEL filter. Both are generic here; a data source file declares its name,
// its attributes and which flatten function maps the API object.

// getFunc and listFunc are the client calls the data sources make.
type (
	getFunc[T any]  = func(context.Context, string) (*T, error)
	listFunc[T any] = func(context.Context, client.ListOptions) ([]T, error)
)

// objectDataSource reads one object by its ID into the model M, or, when keyName is set,
// by that attribute instead (exactly one of the two is given).
type objectDataSource[T any, M any] struct {
	client      *client.Client
	typeName    string // suffix after "warren", e.g. "_api_key"
	description string
	attributes  map[string]schema.Attribute // every attribute but id
	get         func(c *client.Client) getFunc[T]
	flatten     flattenFunc[T, M]
	keyName     string                                                              // e.g. "name"
	find        func(ctx context.Context, c *client.Client, key string) (*T, error) // nil result: no such object
	// parentName is the attribute (in attributes, required) naming the parent of an object
	// of a nested family, e.g. a route's edge_id; getUnder then replaces get.
	parentName string
	getUnder   func(c *client.Client, parentID string) getFunc[T]
}

var (
	_ datasource.DataSourceWithConfigure        = (*objectDataSource[struct{}, struct{}])(nil)
	_ datasource.DataSourceWithConfigValidators = (*objectDataSource[struct{}, struct{}])(nil)
)

func (d *objectDataSource[T, M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.typeName
}

func (d *objectDataSource[T, M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{"id": schema.StringAttribute{MarkdownDescription: "ID of the object to read.", Required: true}}
	for name, a := range d.attributes {
		attrs[name] = a
	}
	if d.keyName != "" {
		attrs["id"] = schema.StringAttribute{MarkdownDescription: "ID of the object to read; or give `" + d.keyName + "`.", Optional: true, Computed: true}
		attrs[d.keyName] = schema.StringAttribute{MarkdownDescription: d.attributes[d.keyName].GetMarkdownDescription() + " Give it or `id`.", Optional: true, Computed: true}
	}
	resp.Schema = schema.Schema{MarkdownDescription: d.description, Attributes: attrs}
}

func (d *objectDataSource[T, M]) ConfigValidators(context.Context) []datasource.ConfigValidator {
	if d.keyName == "" {
		return nil
	}
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot(d.keyName))}
}

func (d *objectDataSource[T, M]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *objectDataSource[T, M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var id, key, parent types.String
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("id"), &id)...)
	if d.parentName != "" {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(d.parentName), &parent)...)
	}
	if d.keyName != "" {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(d.keyName), &key)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	var obj *T
	var err error
	what := strings.TrimPrefix(d.typeName, "_")
	if id.IsNull() && d.keyName != "" {
		obj, err = apiCall(ctx, "find", what, "", func(ctx context.Context) (*T, error) { return d.find(ctx, d.client, key.ValueString()) })
		if err == nil && obj == nil {
			resp.Diagnostics.AddAttributeError(path.Root(d.keyName), "Not found", fmt.Sprintf("No %s has %s %q.", what, d.keyName, key.ValueString()))
			return
		}
	} else {
		get := d.get
		if d.parentName != "" {
			get = func(c *client.Client) getFunc[T] { return d.getUnder(c, parent.ValueString()) }
		}
		obj, err = apiCall(ctx, "get", what, id.ValueString(), func(ctx context.Context) (*T, error) { return get(d.client)(ctx, id.ValueString()) })
	}
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.Config.Schema, "read "+id.ValueString()+key.ValueString(), err)
		return
	}
	var m M
	resp.Diagnostics.Append(d.flatten(ctx, obj, &m)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// listDataSource lists the objects of a family, optionally narrowed by a CEL filter that the
// server evaluates, into the attribute named member.
type listDataSource[T any, M any] struct {
	client      *client.Client
	typeName    string // e.g. "_api_keys"
	member      string // e.g. "api_keys"
	description string
	attributes  map[string]schema.Attribute // the attributes of one item
	list        func(c *client.Client) listFunc[T]
	flatten     flattenFunc[T, M]
	unfiltered  bool // the API takes no filter on this list
}

var _ datasource.DataSourceWithConfigure = (*listDataSource[struct{}, struct{}])(nil)

func (d *listDataSource[T, M]) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + d.typeName
}

func (d *listDataSource[T, M]) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		d.member: schema.ListNestedAttribute{
			MarkdownDescription: "The objects, newest first.",
			Computed:            true,
			NestedObject:        schema.NestedAttributeObject{Attributes: d.attributes},
		},
	}
	if d.filterable() {
		attrs["filter"] = schema.StringAttribute{
			MarkdownDescription: "A CEL expression the server evaluates on each object as `obj`, e.g. `obj.description == \"ci\"`. Without it every object is listed.",
			Optional:            true,
		}
	}
	resp.Schema = schema.Schema{MarkdownDescription: d.description, Attributes: attrs}
}

func (d *listDataSource[T, M]) filterable() bool { return !d.unfiltered }

func (d *listDataSource[T, M]) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *listDataSource[T, M]) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var filter types.String
	if d.filterable() {
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("filter"), &filter)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	objs, err := apiCall(ctx, "list", d.member, "", func(ctx context.Context) ([]T, error) {
		return d.list(d.client)(ctx, client.ListOptions{Filter: filter.ValueString()})
	})
	if err != nil {
		addAPIError(ctx, &resp.Diagnostics, req.Config.Schema, "list"+d.typeName, err)
		return
	}
	items := make([]M, len(objs))
	for i := range objs {
		resp.Diagnostics.Append(d.flatten(ctx, &objs[i], &items[i])...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if d.filterable() {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("filter"), filter)...)
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(d.member), items)...)
}

// Computed attributes of data sources.

func computedString(description string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: description, Computed: true}
}

func computedStringList(description string) schema.ListAttribute {
	return schema.ListAttribute{MarkdownDescription: description, Computed: true, ElementType: types.StringType}
}

// withID adds a computed id to attributes, for the items of list data sources.
func withID(attributes map[string]schema.Attribute) map[string]schema.Attribute {
	out := map[string]schema.Attribute{"id": computedString("ID of the object.")}
	for name, a := range attributes {
		out[name] = a
	}
	return out
}

// dataSources declares the two data sources of a family, data.warren_<name> (one object by
// id, or by keyName) and data.warren_<plural> (the list), from one model, one flatten
// function and one set of attributes.
type dataSources[T any, M any] struct {
	name, plural string
	describeOne  string
	describeAll  string
	attributes   func() map[string]schema.Attribute // every attribute but id
	get          func(c *client.Client) getFunc[T]
	list         func(c *client.Client) listFunc[T]
	flatten      func(*T, *M)
	// flattenDiags, when set, is used instead of flatten: a mapping that reports
	// diagnostics (module values).
	flattenDiags flattenFunc[T, M]
	unfiltered   bool // the API takes no filter on the list
	keyName      string
	find         func(ctx context.Context, c *client.Client, key string) (*T, error)
}

// object is data.warren_<name>.
func (d dataSources[T, M]) object() datasource.DataSource {
	return &objectDataSource[T, M]{
		typeName: "_" + d.name, description: d.describeOne, attributes: d.attributes(),
		get: d.getter(), flatten: d.mapping(), keyName: d.keyName, find: d.find,
	}
}

// all is data.warren_<plural>.
func (d dataSources[T, M]) all() datasource.DataSource {
	return &listDataSource[T, M]{
		typeName: "_" + d.plural, member: d.plural, description: d.describeAll, attributes: withID(d.attributes()),
		list: d.lister(), flatten: d.mapping(), unfiltered: d.unfiltered,
	}
}

// getter and lister are the family's client calls: get and list, else those of the client's
// collection of T.
func (d dataSources[T, M]) getter() func(*client.Client) getFunc[T] {
	if d.get != nil {
		return d.get
	}
	return getOf[T]
}

func (d dataSources[T, M]) lister() func(*client.Client) listFunc[T] {
	if d.list != nil {
		return d.list
	}
	return listOf[T]
}

// mapping is the family's flatten, with diagnostics.
func (d dataSources[T, M]) mapping() flattenFunc[T, M] {
	if d.flattenDiags != nil {
		return d.flattenDiags
	}
	return noDiags(d.flatten)
}
