package apiserver

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// view is a read-only family: objects the server creates itself (agents' sessions, tunnels
// and endpoints), served by GET <path> (paged, filtered) and GET <path>/{id} on every
// replica. They share the list code of the families (serveList).
type view[T any] struct {
	kind   string
	def    *api.Family
	filter filter.Fields // nil when the list takes no filter
	// render fills the uri members and the members computed when read.
	render func(c *call, tx store.Tx, obj *T) error
	// routes registers extra endpoints (the session commands).
	routes func(v *view[T], s *Server, mux *router)
}

func (v *view[T]) collection() collection {
	return collection{kind: v.kind, def: v.def, filter: v.filter}
}

func (v *view[T]) register(s *Server, mux *router) {
	mux.api("GET "+v.def.Path, op{out: typeOf[T](), list: v.def.Member, filter: v.filter != nil}, v.handleList)
	mux.api("GET "+v.def.Path+"/{id}", op{out: typeOf[T]()}, v.handleGet)
	if v.routes != nil {
		v.routes(v, s, mux)
	}
}

func (v *view[T]) handleList(c *call) error {
	q, err := c.parseListQuery(v.def.Prefix, v.filter)
	if err != nil {
		return err
	}
	return c.serveList(q, v.def.Member, func(tx store.Tx) (store.ListQuery, string, error) {
		return store.ListQuery{Kind: v.kind, AccountID: c.who.accountID}, v.def.Path, nil
	}, func(tx store.Tx, o *store.Object) (json.RawMessage, error) {
		out, err := v.rendered(c, tx, o)
		if err != nil {
			return nil, err
		}
		return encodeJSON(out)
	})
}

func (v *view[T]) handleGet(c *call) error {
	var out *T
	err := c.read(func(tx store.Tx) error {
		o, err := v.load(c, tx)
		if err != nil {
			return err
		}
		out, err = v.rendered(c, tx, o)
		return err
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusOK, out)
}

// load reads the object named by the path's {id} in the caller's account; another
// account's is the plain 404, like a missing one (or a session that has ended).
func (v *view[T]) load(c *call, tx store.Tx) (*store.Object, error) {
	id := c.r.PathValue("id")
	if !strings.HasPrefix(id, v.def.Prefix) {
		return nil, wrongPrefix("id", id, v.def.Prefix)
	}
	o, err := c.lookup(tx, id, v.def.Prefix)
	if isNotFound(err) {
		return nil, apierr.NotFound()
	}
	return o, err
}

func (v *view[T]) rendered(c *call, tx store.Tx, o *store.Object) (*T, error) {
	obj := new(T)
	if err := json.Unmarshal(o.Doc, obj); err != nil {
		return nil, err
	}
	return obj, v.render(c, tx, obj)
}

// tunnelSessions is /tunnel_sessions (details.md §6.12) with the session commands.
var tunnelSessions = &view[api.TunnelSession]{
	kind: kindTunnelSession,
	def:  api.TunnelSessions,
	filter: filter.Fields{
		"id": filter.String, "metadata": filter.String, "agent_version": filter.String, "ip": filter.String,
		"os": filter.String, "region": filter.String, "started_at": filter.Timestamp, "credential": filter.String,
	},
	render: func(c *call, _ store.Tx, sess *api.TunnelSession) error {
		*sess = c.s.renderSession(*sess)
		return nil
	},
	routes: sessionCommandRoutes,
}

// renderSession fills a session's uri members.
func (s *Server) renderSession(sess api.TunnelSession) api.TunnelSession {
	sess.URI = s.opts.BaseURL + api.TunnelSessions.Path + "/" + sess.ID
	sess.Credential = s.ref(sess.Credential.ID)
	return sess
}

// tunnels is /tunnels: no uri; backends are the account's tunnel-group backends whose
// labels the tunnel's labels include, as they stand when read.
var tunnels = &view[api.Tunnel]{
	kind: kindTunnel,
	def:  api.Tunnels,
	render: func(c *call, tx store.Tx, t *api.Tunnel) error {
		t.TunnelSession = c.ref(t.TunnelSession.ID)
		if t.Endpoint != nil {
			ref := c.ref(t.Endpoint.ID)
			t.Endpoint = &ref
		}
		backends, err := tx.List(c.r.Context(), store.ListQuery{Kind: kinds.TunnelGroupBackend, AccountID: c.who.accountID})
		if err != nil {
			return err
		}
		var matching []string
		for _, o := range backends {
			var b api.TunnelGroupBackend
			if err := json.Unmarshal(o.Doc, &b); err != nil {
				return err
			}
			if labelsMatch(b.Labels, t.Labels) {
				matching = append(matching, b.ID)
			}
		}
		t.Backends = c.refList(matching)
		return nil
	},
}

// labelsMatch reports whether a tunnel with the labels have serves a tunnel group that
// selects want: every wanted label is there with its value. A group without labels
// selects nothing, and an unlabeled tunnel is in no group.
func labelsMatch(want, have map[string]string) bool {
	if len(want) == 0 || len(have) == 0 {
		return false
	}
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// endpoints is /endpoints (details.md §6.16, §7.5), read-only: the endpoints of agents'
// tunnels.
var endpoints = &view[api.Endpoint]{
	kind: kindEndpoint,
	def:  api.Endpoints,
	filter: filter.Fields{
		"id": filter.String, "created_at": filter.Timestamp, "updated_at": filter.Timestamp, "description": filter.String,
		"metadata": filter.String, "url": filter.String, "proto": filter.String, "type": filter.String,
		"host": filter.String, "hostport": filter.String, "region": filter.String, "bindings": filter.StringList,
		"tunnel": filter.String, "tunnel_session": filter.String, "domain": filter.String, "tcp_addr": filter.String,
	},
	render: func(c *call, _ store.Tx, ep *api.Endpoint) error {
		ep.URI = c.s.opts.BaseURL + api.Endpoints.Path + "/" + ep.ID
		for _, r := range []**api.Ref{&ep.Domain, &ep.TCPAddr, &ep.Tunnel, &ep.Edge, &ep.Principal, &ep.TunnelSession} {
			if *r != nil {
				ref := c.ref((*r).ID)
				*r = &ref
			}
		}
		if ep.Bindings == nil {
			ep.Bindings = []string{}
		}
		return nil
	},
}

// matchingTunnels returns the IDs of the account's tunnels that a tunnel group with labels
// selects, newest first.
func matchingTunnels(c *call, tx store.Tx, labels map[string]string) ([]string, error) {
	objs, err := tx.List(c.r.Context(), store.ListQuery{Kind: kindTunnel, AccountID: c.who.accountID})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		var t api.Tunnel
		if err := json.Unmarshal(o.Doc, &t); err != nil {
			return nil, err
		}
		if labelsMatch(labels, t.Labels) {
			out = append(out, t.ID)
		}
	}
	return out, nil
}

// sessionCommandRoutes registers the session commands (POST /tunnel_sessions/{id}/restart|stop|update,
// details.md §6.12), which the agent plane delivers to the session's agent.
func sessionCommandRoutes(v *view[api.TunnelSession], s *Server, mux *router) {
	for _, name := range []string{agentproto.CommandRestart, agentproto.CommandStop, agentproto.CommandUpdate} {
		mux.api("POST "+v.def.Path+"/{id}/"+name, op{in: typeOf[struct{}](), status: noContent}, func(c *call) error {
			var in struct{}
			if _, err := c.decodeBody(&in); err != nil {
				return err
			}
			var sess *store.Object
			err := c.read(func(tx store.Tx) (err error) {
				sess, err = v.load(c, tx)
				return err
			})
			if err != nil {
				return err
			}
			if err := s.agents.Command(c.r.Context(), sess, name); err != nil {
				return err
			}
			return c.noContent()
		})
	}
}
