package apiserver

import (
	"bytes"
	"net/http"
	"reflect"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// A module is a part of an edge or route with its own sub-endpoint (details.md §6.10, §6.11,
// §8): PUT <owner>/{id}/<name> replaces it (flat body; a top-level "module" wrapper is
// unwrapped too), GET shows it and DELETE removes it; GET and DELETE of a module that is not
// configured are 404. A module given in a create or PATCH of its owner goes through the same
// build function and replaces the whole module. The IDs a module holds are refs of its
// owner, so what it uses cannot be deleted while it does.

// moduleDef declares a module of owner P: Req is its request form, Resp its response form.
type moduleDef[P any, Req any, Resp any] struct {
	name  string
	field func(P) **Resp // where the module lives in its owner
	// build validates a request and returns the module, defaults filled in. It runs in the
	// owner's write transaction, so it may check that referenced objects exist.
	build func(w *write[P], in *Req) (*Resp, error)
	// refs lists the IDs the module holds; nil when it holds none.
	refs func(*Resp) []string
	// render fills response-only members (the uri of refs); nil when there are none.
	render func(c *call, m *Resp)
}

// module is a moduleDef with its types erased, as its owner's family holds it.
type module[P any] struct {
	name    string
	in, out reflect.Type                        // Req and Resp, for the OpenAPI document
	set     func(w *write[P], raw []byte) error // decode strictly, build, set
	get     func(obj P) any                     // nil when not configured
	clear   func(obj P)
	refs    func(obj P) []string
	render  func(c *call, obj P)
}

func (d moduleDef[P, Req, Resp]) erase() module[P] {
	return module[P]{
		name: d.name,
		in:   typeOf[Req](),
		out:  typeOf[Resp](),
		set: func(w *write[P], raw []byte) error {
			in := new(Req)
			if _, err := decodeObject(raw, in); err != nil {
				return err
			}
			m, err := d.build(w, in)
			if err != nil {
				return err
			}
			*d.field(w.obj) = m
			return nil
		},
		get: func(obj P) any {
			if m := *d.field(obj); m != nil {
				return m
			}
			return nil
		},
		clear: func(obj P) { *d.field(obj) = nil },
		refs: func(obj P) []string {
			if m := *d.field(obj); m != nil && d.refs != nil {
				return d.refs(m)
			}
			return nil
		},
		render: func(c *call, obj P) {
			if m := *d.field(obj); m != nil && d.render != nil {
				d.render(c, m)
			}
		},
	}
}

// applyModules builds the modules a create or PATCH body gives (members not null).
func (f *family[T, P, C, U]) applyModules(w *write[P], members map[string]jsontext.Value) error {
	for _, m := range f.modules {
		if raw, given := members[m.name]; given && raw.Kind() != jsontext.KindNull {
			if err := m.set(w, raw); err != nil {
				return underMember(err, m.name)
			}
		}
	}
	return nil
}

// underMember makes the param of a module's error a path from its owner ("value" becomes
// "traffic_policy.value"), as the module was given inside the owner's body; an error that
// names no param names the module.
func underMember(err error, member string) error {
	e, known := apierr.From(err)
	if !known {
		return err
	}
	if param := e.Details["param"]; param != "" {
		e.Details["param"] = member + "." + param
	} else {
		e.Details["param"] = member
	}
	return e
}

// registerModule serves PUT, GET and DELETE <path>/{id}/<module>.
func (f *family[T, P, C, U]) registerModule(s *Server, mux *router, m module[P]) {
	path := f.def.Path + "/{id}/" + m.name
	mux.api("PUT "+path, op{in: m.in, out: m.out, wrapper: "module"}, func(c *call) error {
		raw, err := c.readBody()
		if err != nil {
			return err
		}
		raw, err = unwrapModule(raw)
		if err != nil {
			return err
		}
		w, err := f.modify(c, func(w *write[P]) error { return m.set(w, raw) })
		if err != nil {
			return err
		}
		return c.writeJSON(http.StatusOK, m.get(f.rendered(c, w.obj, w.parentID)))
	})
	mux.api("GET "+path, op{out: m.out}, func(c *call) error {
		var obj P
		var stored *store.Object
		err := c.read(func(tx store.Tx) (err error) {
			obj, stored, err = f.load(c, tx)
			return err
		})
		if err != nil {
			return err
		}
		if m.get(obj) == nil {
			return apierr.NotFound()
		}
		return c.writeJSON(http.StatusOK, m.get(f.rendered(c, obj, stored.ParentID)))
	})
	mux.api("DELETE "+path, op{status: noContent}, func(c *call) error {
		_, err := f.modify(c, func(w *write[P]) error {
			if m.get(w.obj) == nil {
				return apierr.NotFound()
			}
			m.clear(w.obj)
			return nil
		})
		if err != nil {
			return err
		}
		return c.noContent()
	})
}

// unwrapModule returns the module of a PUT body: the body itself, or the value of its only
// member "module" (the wrapper of the generated clients, details.md §6.10).
func unwrapModule(raw []byte) ([]byte, error) {
	var members map[string]jsontext.Value
	if _, err := decodeObject(raw, &members); err != nil {
		return nil, err
	}
	if inner, ok := members["module"]; ok && len(members) == 1 {
		if inner.Kind() != jsontext.KindBeginObject {
			return nil, apierr.WithDetail(apierr.BadRequest("ERR_215", "Invalid value for parameter %q: expected an object.", "module"), "param", "module")
		}
		return bytes.Clone(inner), nil
	}
	return raw, nil
}

// renderRefs fills the uri of refs.
func renderRefs(c *call, refs []api.Ref) {
	for i := range refs {
		refs[i] = c.ref(refs[i].ID)
	}
}

// enabled is a module's enabled member: true unless given as false (details.md §8.1).
func enabled(b *bool) bool { return b == nil || *b }

// The modules, each declared once for every owner that has it (field says where it lives).

// pureModule is a module whose rules need nothing but its request (internal/rules).
func pureModule[P any, Req any, Resp any](name string, field func(P) **Resp, build func(*Req) (*Resp, error)) module[P] {
	return moduleDef[P, Req, Resp]{
		name:  name,
		field: field,
		build: func(_ *write[P], in *Req) (*Resp, error) { return build(in) },
	}.erase()
}

// backendModule sends the traffic to a backend of any kind of the account (§8.10).
func backendModule[P any](field func(P) **api.BackendModule) module[P] {
	return moduleDef[P, api.BackendModuleRequest, api.BackendModule]{
		name:  "backend",
		field: field,
		build: func(w *write[P], in *api.BackendModuleRequest) (*api.BackendModule, error) {
			if err := requireBackend(w.c, w.tx, deref(in.BackendID), "backend_id"); err != nil {
				return nil, err
			}
			return &api.BackendModule{Enabled: enabled(in.Enabled), Backend: api.Ref{ID: *in.BackendID}}, nil
		},
		refs:   func(m *api.BackendModule) []string { return []string{m.Backend.ID} },
		render: func(c *call, m *api.BackendModule) { m.Backend = c.ref(m.Backend.ID) },
	}.erase()
}

// ipRestrictionModule admits the sources its IP policies allow (§8.4).
func ipRestrictionModule[P any](field func(P) **api.IPRestrictionModule) module[P] {
	return moduleDef[P, api.IPRestrictionModuleRequest, api.IPRestrictionModule]{
		name:  "ip_restriction",
		field: field,
		build: func(w *write[P], in *api.IPRestrictionModuleRequest) (*api.IPRestrictionModule, error) {
			refs, err := requireAll(w, in.IPPolicyIDs, rules.IPPolicyIDs, ids.IPPolicy, "ERR_7007", "IP policy", "ip_policy_ids")
			return &api.IPRestrictionModule{Enabled: enabled(in.Enabled), IPPolicies: refs}, err
		},
		refs:   func(m *api.IPRestrictionModule) []string { return api.RefIDs(m.IPPolicies) },
		render: func(c *call, m *api.IPRestrictionModule) { renderRefs(c, m.IPPolicies) },
	}.erase()
}

// mutualTLSModule asks clients for a certificate signed by one of its CAs (§8.3).
func mutualTLSModule[P any](field func(P) **api.MutualTLSModule) module[P] {
	return moduleDef[P, api.MutualTLSModuleRequest, api.MutualTLSModule]{
		name:  "mutual_tls",
		field: field,
		build: func(w *write[P], in *api.MutualTLSModuleRequest) (*api.MutualTLSModule, error) {
			refs, err := requireAll(w, in.CertificateAuthorityIDs, rules.CertificateAuthorityIDs, ids.CertificateAuthority, "ERR_7072", "certificate authority", "certificate_authority_ids")
			return &api.MutualTLSModule{Enabled: enabled(in.Enabled), CertificateAuthorities: refs}, err
		},
		refs:   func(m *api.MutualTLSModule) []string { return api.RefIDs(m.CertificateAuthorities) },
		render: func(c *call, m *api.MutualTLSModule) { renderRefs(c, m.CertificateAuthorities) },
	}.erase()
}

// requireAll checks a list of IDs with its rule, then that each is an object of prefix in
// the caller's account (else code), and returns their Refs in the given order.
func requireAll[P any](w *write[P], list []string, rule func([]string) error, prefix, code, what, param string) ([]api.Ref, error) {
	if err := rule(list); err != nil {
		return nil, err
	}
	refs := make([]api.Ref, len(list))
	for i, id := range list {
		if _, err := w.c.lookup(w.tx, id, prefix); isNotFound(err) {
			return nil, apierr.WithDetail(apierr.BadRequest(code, "The %s %s does not exist.", what, rules.Quote(id)), "param", param)
		} else if err != nil {
			return nil, err
		}
		refs[i] = api.Ref{ID: id}
	}
	return refs, nil
}

// tlsTerminationModule says where TLS ends on an "https" or "tls" edge (§8.2).
func tlsTerminationModule[P any](edge string, field func(P) **api.TLSTerminationModule) module[P] {
	return pureModule("tls_termination", field, func(in *api.TLSTerminationModuleRequest) (*api.TLSTerminationModule, error) {
		return rules.TLSTermination(in, edge)
	})
}

// trafficPolicyModule holds a traffic policy whose phases suit its owner (§8.10).
func trafficPolicyModule[P any](owner string, field func(P) **api.TrafficPolicyModule) module[P] {
	return pureModule("traffic_policy", field, func(in *api.TrafficPolicyModuleRequest) (*api.TrafficPolicyModule, error) {
		return rules.TrafficPolicy(in, owner)
	})
}

// toggleModule is compression or websocket_tcp_converter: enabled only.
func toggleModule[P any](name string, field func(P) **api.ToggleModule) module[P] {
	return pureModule(name, field, func(in *api.ToggleModuleRequest) (*api.ToggleModule, error) { return rules.Toggle(in), nil })
}
