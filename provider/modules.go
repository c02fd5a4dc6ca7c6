package provider

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	dschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

// Edge and route modules, each declared once: its members (from which the resource schema,
// the data source schema and the attribute types of the conversions are all derived), its
// model, and its conversions to the API's request form and from its response form. An edge
// or route resource takes a module as one SingleNestedAttribute; a module that is not
// configured is null.
//
// Rules shared by every module:
//   - `enabled` is Optional+Computed and defaults to true, as the API does (§8.1);
//   - members the server fills in when omitted have that value as their default, so a plan
//     knows them; members it derives (SAML's URLs) are Computed;
//   - a list the API returns as [] when never sent is null in state while the configuration
//     leaves it out, so an unset list never diffs (data sources show the API's []);
//   - a request member is sent only for a known, non-null value;
//   - secrets are Sensitive and also write-only (`<name>_wo` + `<name>_wo_version`): the
//     state keeps the clear value the API returns only when the configuration gave it.

// memberKind is the type of a module member.
type memberKind int

const (
	kindString memberKind = iota
	kindBool
	kindInt
	kindFloat
	kindStrings   // list of strings
	kindStringMap // map of strings
	kindObject    // nested members
	kindPolicy    // a traffic policy document (semantic equality)
)

// member is one attribute of a module, spelled once.
type member struct {
	name, desc string
	kind       memberKind
	required   bool
	def        any  // the server's default (bool, int64, float64 or string): Optional+Computed
	derived    bool // the server derives it: Computed
	sensitive  bool
	writeOnly  bool // resource only: absent from data sources
	inputOnly  bool // resource only (a _wo_version)
	members    []member
	strings    []validator.String
	lists      []validator.List
}

func (m member) resource() rschema.Attribute {
	optional := !m.required && !m.derived
	computed := m.derived || m.def != nil
	switch m.kind {
	case kindBool:
		a := rschema.BoolAttribute{MarkdownDescription: m.desc, Required: m.required, Optional: optional, Computed: computed}
		if d, ok := m.def.(bool); ok {
			a.Default = booldefault.StaticBool(d)
		}
		return a
	case kindInt:
		a := rschema.Int64Attribute{MarkdownDescription: m.desc, Required: m.required, Optional: optional, Computed: computed}
		if d, ok := m.def.(int64); ok {
			a.Default = int64default.StaticInt64(d)
		}
		return a
	case kindFloat:
		a := rschema.Float64Attribute{MarkdownDescription: m.desc, Required: m.required, Optional: optional, Computed: computed}
		if d, ok := m.def.(float64); ok {
			a.Default = float64default.StaticFloat64(d)
		}
		return a
	case kindStrings:
		return rschema.ListAttribute{MarkdownDescription: m.desc, ElementType: types.StringType, Required: m.required, Optional: optional, Computed: m.derived, Validators: m.lists}
	case kindStringMap:
		return rschema.MapAttribute{MarkdownDescription: m.desc, ElementType: types.StringType, Required: m.required, Optional: optional}
	case kindObject:
		attrs := map[string]rschema.Attribute{}
		for _, c := range m.members {
			attrs[c.name] = c.resource()
		}
		return rschema.SingleNestedAttribute{MarkdownDescription: m.desc, Attributes: attrs, Required: m.required, Optional: optional}
	}
	a := rschema.StringAttribute{
		MarkdownDescription: m.desc, Required: m.required, Optional: optional, Computed: computed,
		Sensitive: m.sensitive, WriteOnly: m.writeOnly, Validators: m.strings,
	}
	if d, ok := m.def.(string); ok {
		a.Default = stringdefault.StaticString(d)
	}
	if m.derived {
		// Not UseStateForUnknown: a module added by an update has a null prior value, which
		// would be planned as null although the server derives one.
		a.PlanModifiers = []planmodifier.String{stringplanmodifier.UseNonNullStateForUnknown()}
	}
	if m.kind == kindPolicy {
		a.CustomType = policyType{}
		a.PlanModifiers = append(a.PlanModifiers, keepSamePolicy)
	}
	return a
}

// data is the member in a data source: computed.
func (m member) data() dschema.Attribute {
	switch m.kind {
	case kindBool:
		return dschema.BoolAttribute{MarkdownDescription: m.desc, Computed: true}
	case kindInt:
		return dschema.Int64Attribute{MarkdownDescription: m.desc, Computed: true}
	case kindFloat:
		return dschema.Float64Attribute{MarkdownDescription: m.desc, Computed: true}
	case kindStrings:
		return dschema.ListAttribute{MarkdownDescription: m.desc, ElementType: types.StringType, Computed: true}
	case kindStringMap:
		return dschema.MapAttribute{MarkdownDescription: m.desc, ElementType: types.StringType, Computed: true}
	case kindObject:
		return dschema.SingleNestedAttribute{MarkdownDescription: m.desc, Attributes: dataAttributes(m.members), Computed: true}
	case kindPolicy:
		return dschema.StringAttribute{MarkdownDescription: m.desc, Computed: true, CustomType: policyType{}}
	}
	return dschema.StringAttribute{MarkdownDescription: m.desc, Computed: true, Sensitive: m.sensitive}
}

func dataAttributes(members []member) map[string]dschema.Attribute {
	attrs := map[string]dschema.Attribute{}
	for _, c := range members {
		if !c.writeOnly && !c.inputOnly {
			attrs[c.name] = c.data()
		}
	}
	return attrs
}

// module is one module kind: M its model, Req and Resp its API forms.
type module[M, Req, Resp any] struct {
	members []member
	// expand builds the request from the plan's model; config is the configuration's, which
	// alone holds write-only values.
	expand func(plan, config *M) *Req
	// flatten builds the model from the API's answer; prior is the plan's or the state's
	// model, nil in a data source.
	flatten func(r *Resp, prior *M) M
	// rules over which members are set, relative to the module (validators.Members.Under).
	rules []validators.Members
	// check is the server's value rule (internal/rules), run at plan time on known values.
	check func(*Req) error
}

// resourceAttribute is the module in a resource schema: optional, null when not configured.
func (d module[M, Req, Resp]) resourceAttribute(desc string) rschema.SingleNestedAttribute {
	a := member{desc: desc, kind: kindObject, members: d.members}.resource().(rschema.SingleNestedAttribute)
	if d.check != nil {
		a.Validators = []validator.Object{moduleCheck[M, Req]{expand: d.expand, check: d.check, members: d.rules}}
	}
	return a
}

// dataAttribute is the module in a data source schema: computed.
func (d module[M, Req, Resp]) dataAttribute(desc string) dschema.SingleNestedAttribute {
	return member{desc: desc, kind: kindObject, members: d.members}.data().(dschema.SingleNestedAttribute)
}

func (d module[M, Req, Resp]) attrTypes() map[string]attr.Type {
	return d.resourceAttribute("").GetType().(basetypes.ObjectType).AttrTypes
}

// members are the module's rules over which members are set, for the module at p.
func (d module[M, Req, Resp]) memberRules(p path.Path) []validators.Members {
	out := make([]validators.Members, len(d.rules))
	for i, r := range d.rules {
		out[i] = r.Under(p)
	}
	return out
}

// request is the module's request form for a create or PATCH of its owner; nil when the
// plan has no such module.
func (d module[M, Req, Resp]) request(ctx context.Context, plan, config types.Object, diags *diag.Diagnostics) *Req {
	if !known(plan) {
		return nil
	}
	var p, c M
	diags.Append(plan.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	if known(config) {
		diags.Append(config.As(ctx, &c, basetypes.ObjectAsOptions{})...)
	}
	if diags.HasError() {
		return nil
	}
	return d.expand(&p, &c)
}

// value is the module's value in a resource's state: null when the API has none.
func (d module[M, Req, Resp]) value(ctx context.Context, r *Resp, prior types.Object, diags *diag.Diagnostics) types.Object {
	if r == nil {
		return types.ObjectNull(d.attrTypes())
	}
	var p M
	if known(prior) {
		diags.Append(prior.As(ctx, &p, basetypes.ObjectAsOptions{})...)
	}
	m := d.flatten(r, &p)
	v, ds := types.ObjectValueFrom(ctx, d.attrTypes(), m)
	diags.Append(ds...)
	return v
}

// dataValue is the module's value in a data source: what the API says, without the
// resource's input-only members.
func (d module[M, Req, Resp]) dataValue(ctx context.Context, r *Resp, diags *diag.Diagnostics) types.Object {
	typ := d.dataAttribute("").GetType().(basetypes.ObjectType)
	if r == nil {
		return types.ObjectNull(typ.AttrTypes)
	}
	m := d.flatten(r, nil)
	v, ds := types.ObjectValueFrom(ctx, d.attrTypes(), m)
	diags.Append(ds...)
	if diags.HasError() {
		return types.ObjectNull(typ.AttrTypes)
	}
	return onlyTypes(v, typ, diags)
}

// onlyTypes keeps the attributes of v that typ has, at every depth.
func onlyTypes(v types.Object, typ basetypes.ObjectType, diags *diag.Diagnostics) types.Object {
	if v.IsNull() || v.IsUnknown() {
		return types.ObjectNull(typ.AttrTypes)
	}
	attrs := map[string]attr.Value{}
	for name, t := range typ.AttrTypes {
		a := v.Attributes()[name]
		if o, ok := a.(types.Object); ok {
			if ot, ok := t.(basetypes.ObjectType); ok {
				a = onlyTypes(o, ot, diags)
			}
		}
		attrs[name] = a
	}
	out, ds := types.ObjectValue(typ.AttrTypes, attrs)
	diags.Append(ds...)
	return out
}

// moduleCheck runs a module's value rule of internal/rules at plan time, once the module is
// known down to its last value (until then the server checks it at apply), and reports each
// violation on the member it names: one diagnostic per problem, every problem of the module.
type moduleCheck[M, Req any] struct {
	expand func(plan, config *M) *Req
	check  func(*Req) error
	// members are the module's rules over which members are set: while one fails, its own
	// diagnostic says so, and the value rule (which checks the same again) stays silent.
	members []validators.Members
}

func (v moduleCheck[M, Req]) Description(context.Context) string {
	return "the module's values follow the API's rules"
}
func (v moduleCheck[M, Req]) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (v moduleCheck[M, Req]) ValidateObject(ctx context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if !fullyKnown(ctx, req.ConfigValue) {
		return
	}
	for _, r := range v.members {
		if req.Config.Schema != nil && r.Under(req.Path).Check(ctx, req.Config, false).HasError() {
			return
		}
	}
	// The rule stops at its first violation: the member it names is left out (the server's
	// default, or missing) and the rule run again, so that each member's problem is reported,
	// once; a member named again has nothing new to say.
	value, reported := req.ConfigValue, map[string]bool{}
	for range len(value.Attributes()) + 1 {
		var m M
		if value.As(ctx, &m, basetypes.ObjectAsOptions{}).HasError() {
			return
		}
		err := v.check(v.expand(&m, &m))
		if err == nil {
			return
		}
		field := violationField(err)
		if reported[field] {
			return
		}
		reported[field] = true
		addViolationAt(&resp.Diagnostics, req.Path, "Invalid module", err)
		var ok bool
		if value, ok = withoutMember(ctx, value, field); !ok {
			return
		}
	}
}

// violationField is the member a violation of internal/rules names ("" for none).
func violationField(err error) string {
	var v *rules.Violation
	if errors.As(err, &v) {
		return v.Field
	}
	return ""
}

// withoutMember is the object with the attribute a member path names ("num_buckets",
// "provider.github.teams", "backends[2]": the deepest attribute it names) set to null; false
// when the path names no attribute.
func withoutMember(ctx context.Context, obj types.Object, field string) (types.Object, bool) {
	names := strings.FieldsFunc(field, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	if len(names) == 0 {
		return obj, false
	}
	attrs := obj.Attributes()
	current, ok := attrs[names[0]]
	if !ok {
		return obj, false
	}
	typ := obj.AttributeTypes(ctx)[names[0]]
	var replaced attr.Value
	if nested, isObject := current.(types.Object); isObject && len(names) > 1 && known(nested) {
		if inner, ok := withoutMember(ctx, nested, strings.Join(names[1:], ".")); ok {
			replaced = inner
		}
	}
	if replaced == nil {
		null, err := typ.ValueFromTerraform(ctx, tftypes.NewValue(typ.TerraformType(ctx), nil))
		if err != nil {
			return obj, false
		}
		replaced = null
	}
	out := make(map[string]attr.Value, len(attrs))
	for name, a := range attrs {
		out[name] = a
	}
	out[names[0]] = replaced
	value, diags := types.ObjectValue(obj.AttributeTypes(ctx), out)
	return value, !diags.HasError()
}

// fullyKnown says a value holds no unknown value at any depth.
func fullyKnown(ctx context.Context, v attr.Value) bool {
	if v.IsNull() || v.IsUnknown() {
		return false
	}
	raw, err := v.ToTerraformValue(ctx)
	return err == nil && raw.IsFullyKnown()
}

// Conversion helpers of module members.

func boolPtr(v types.Bool) *bool {
	if !known(v) {
		return nil
	}
	b := v.ValueBool()
	return &b
}

func int64Ptr(v types.Int64) *int64 {
	if !known(v) {
		return nil
	}
	i := v.ValueInt64()
	return &i
}

func float64Ptr(v types.Float64) *float64 {
	if !known(v) {
		return nil
	}
	f := v.ValueFloat64()
	return &f
}

// listValue maps a list of the API, which answers [] for a list never sent: null while the
// prior model has it null (prior nil: a data source, which shows the API's []).
func listValue[M any](items []string, prior *M, priorList func(*M) types.List) types.List {
	if len(items) == 0 && prior != nil && priorList(prior).IsNull() {
		return types.ListNull(types.StringType)
	}
	return stringList(items)
}

// secretValue maps a secret the API returns in clear: kept in state only when the
// configuration gave it as a value (not write-only); a data source shows it (sensitive).
func secretValue(s *string, prior types.String, data bool) types.String {
	if s == nil || (!data && prior.IsNull()) {
		return types.StringNull()
	}
	return types.StringValue(*s)
}

// secretState is how a module's secret and its write-only version read back: from the API's
// answer (secretValue) with the prior version kept, or, in a data source (no prior), shown.
func secretState[M any](s *string, prior *M, fields func(*M) (secret types.String, version types.Int64)) (types.String, types.Int64) {
	if prior == nil {
		return secretValue(s, types.StringNull(), true), types.Int64Null()
	}
	secret, version := fields(prior)
	return secretValue(s, secret, false), version
}

// secretOf is the secret to send: the value, else the write-only one from the configuration.
func secretOf(value, writeOnly types.String) *string {
	if s := optional(value); s != nil {
		return s
	}
	return optional(writeOnly)
}

// Members every module has, and the secret members.

func enabledMember() member {
	return member{name: "enabled", kind: kindBool, def: true, desc: "Whether the module is active. Defaults to `true`, as the API does."}
}

// secretMembers are <name> (sensitive, kept in state), <name>_wo (write-only) and
// <name>_wo_version.
func secretMembers(name, what string) []member {
	return []member{
		{name: name, kind: kindString, sensitive: true, desc: "The " + what + ". Kept in state (sensitive); the API returns it in clear. Or give `" + name + "_wo`."},
		{name: name + "_wo", kind: kindString, sensitive: true, writeOnly: true, desc: "The " + what + ", write-only (Terraform 1.11+): sent to the server, never stored by Terraform. Change `" + name + "_wo_version` to send a new one."},
		{name: name + "_wo_version", kind: kindInt, inputOnly: true, desc: "Change this number to send `" + name + "_wo` again."},
	}
}

// secretRules: the value and the write-only form conflict; a version needs the write-only form.
func secretRules(at path.Path, name string) []validators.Members {
	return []validators.Members{
		validators.Conflicting(validators.Join(at, path.Root(name)), validators.Join(at, path.Root(name+"_wo"))),
		validators.AlsoRequires(validators.Join(at, path.Root(name+"_wo_version")), validators.Join(at, path.Root(name+"_wo"))),
	}
}

func nonEmptyIDs(max int) []validator.List {
	lists := []validator.List{listvalidator.SizeAtLeast(1), listvalidator.UniqueValues()}
	if max > 0 {
		lists = append(lists, listvalidator.SizeAtMost(max))
	}
	return lists
}

func oneOf(values ...string) []validator.String {
	return []validator.String{stringvalidator.OneOf(values...)}
}

// namedModule is one module of an owner's model: its API name (also its attribute's) and value.
type namedModule struct {
	name  string
	value types.Object
}

// moduleDeleter is a client's DeleteModule (Collection.DeleteModule).
type moduleDeleter = func(ctx context.Context, id, module string) error

// ownedModules are the modules of an owner (an edge, a route) for its update: the API's PATCH
// keeps the modules it omits, so one removed from the configuration is DELETEd.
type ownedModules[M any] struct {
	// of lists the model's modules, in the order removed ones are deleted: a module that
	// needs another comes before it (mutual_tls before tls_termination).
	of func(*M) []namedModule
	// del is the DELETE of the owner's modules; it may depend on the model (a route's edge).
	del func(c *client.Client, m *M) moduleDeleter
}

// removed names the modules the prior state has and the plan has not.
func (o ownedModules[M]) removed(plan, prior *M) []string {
	if o.of == nil {
		return nil
	}
	planned := map[string]bool{}
	for _, m := range o.of(plan) {
		planned[m.name] = !m.value.IsNull()
	}
	var out []string
	for _, m := range o.of(prior) {
		if !m.value.IsNull() && !planned[m.name] {
			out = append(out, m.name)
		}
	}
	return out
}

// remove DELETEs the modules removed from the configuration of the owner id, in order; one
// already gone is fine.
func (o ownedModules[M]) remove(ctx context.Context, c *client.Client, what, id string, plan, prior *M) error {
	for _, name := range o.removed(plan, prior) {
		del := o.del(c, prior)
		if _, err := apiCall(ctx, "delete", what+" module "+name, id, func(ctx context.Context) (struct{}, error) {
			return struct{}{}, del(ctx, id, name)
		}); err != nil && !client.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// moduleSlot is one module of an owner (model M, request In, response Out): where it sits in
// each, so that the owner's schema, expand and flatten loop over its modules.
type moduleSlot[M, In, Out any] struct {
	name string
	// desc is the module's description; dataDesc, when set, replaces it in data sources.
	desc, dataDesc string
	resource       func(desc string) rschema.Attribute
	data           func(desc string) dschema.Attribute
	rules          func(path.Path) []validators.Members
	expand         func(ctx context.Context, plan, config *M, in *In, diags *diag.Diagnostics)
	flatten        func(ctx context.Context, out *Out, m *M, data bool, diags *diag.Diagnostics)
	// field is the module's object in the model.
	field func(*M) *types.Object
}

// slot places the module d, described by what, in an owner: field is its object in the
// model, req its member in the request, resp its member in the response.
func slot[Mod, Req, Resp, M, In, Out any](name, what string, d module[Mod, Req, Resp], field func(*M) *types.Object, req func(*In) **Req, resp func(*Out) *Resp) moduleSlot[M, In, Out] {
	return moduleSlot[M, In, Out]{
		name:     name,
		desc:     moduleDescription(name, what),
		resource: func(desc string) rschema.Attribute { return d.resourceAttribute(desc) },
		data:     func(desc string) dschema.Attribute { return d.dataAttribute(desc) },
		rules:    d.memberRules,
		expand: func(ctx context.Context, plan, config *M, in *In, diags *diag.Diagnostics) {
			c := types.ObjectNull(d.attrTypes())
			if config != nil {
				c = *field(config)
			}
			*req(in) = d.request(ctx, *field(plan), c, diags)
		},
		flatten: func(ctx context.Context, out *Out, m *M, data bool, diags *diag.Diagnostics) {
			if data {
				*field(m) = d.dataValue(ctx, resp(out), diags)
				return
			}
			*field(m) = d.value(ctx, resp(out), *field(m), diags)
		},
		field: field,
	}
}

// describedInData is the slot with another description in data sources.
func (s moduleSlot[M, In, Out]) describedInData(desc string) moduleSlot[M, In, Out] {
	s.dataDesc = desc
	return s
}

// moduleSlots are an owner's modules, in the order removed ones are deleted (a module that
// needs another comes before it).
type moduleSlots[M, In, Out any] []moduleSlot[M, In, Out]

// resourceAttributes adds the modules to an owner's resource schema attributes.
func (t moduleSlots[M, In, Out]) resourceAttributes(attrs map[string]rschema.Attribute) map[string]rschema.Attribute {
	for _, s := range t {
		attrs[s.name] = s.resource(s.desc)
	}
	return attrs
}

// dataAttributes adds the modules to an owner's data source schema attributes.
func (t moduleSlots[M, In, Out]) dataAttributes(attrs map[string]dschema.Attribute) map[string]dschema.Attribute {
	for _, s := range t {
		desc := s.desc
		if s.dataDesc != "" {
			desc = s.dataDesc
		}
		attrs[s.name] = s.data(desc)
	}
	return attrs
}

// memberRules are the modules' rules over which members are set.
func (t moduleSlots[M, In, Out]) memberRules() []validators.Members {
	var out []validators.Members
	for _, s := range t {
		out = append(out, s.rules(path.Root(s.name))...)
	}
	return out
}

// owned are the modules for the crud's update, deleted with del.
func (t moduleSlots[M, In, Out]) owned(del func(c *client.Client, m *M) moduleDeleter) ownedModules[M] {
	return ownedModules[M]{
		of: func(m *M) []namedModule {
			out := make([]namedModule, len(t))
			for i, s := range t {
				out[i] = namedModule{s.name, *s.field(m)}
			}
			return out
		},
		del: del,
	}
}

// expand sets the request's modules from the plan; config (nil when no module reads it)
// holds the write-only values.
func (t moduleSlots[M, In, Out]) expand(ctx context.Context, plan, config *M, in *In, diags *diag.Diagnostics) {
	for _, s := range t {
		s.expand(ctx, plan, config, in, diags)
	}
}

// flatten sets the model's modules from the API's answer; data says m is a data source's.
func (t moduleSlots[M, In, Out]) flatten(ctx context.Context, out *Out, m *M, data bool, diags *diag.Diagnostics) {
	for _, s := range t {
		s.flatten(ctx, out, m, data, diags)
	}
}
