package apiserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// copyTarget makes dst a deep copy of the request's target: check moves the secrets out of
// the destination's target in place, and the request must stay as it was given (a retried
// write transaction runs the hooks again).
func copyTarget(dst, src *api.EventTarget) error {
	data, err := json.Marshal(src)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, dst)
}

// eventDestinations is /event_destinations (details.md §6.15). Create and PATCH leave the
// secrets in the object; check moves them to the secret column before it is stored. A PATCH
// target replaces the whole target and must keep its kind (ERR_5108); a secret it leaves
// empty keeps the stored one, since responses never show it. A destination a subscription
// names cannot be deleted (ERR_5112).
var eventDestinations = &family[api.EventDestination, *api.EventDestination, api.EventDestinationCreate, api.EventDestinationUpdate]{
	kind:   kinds.EventDestination,
	def:    api.EventDestinations,
	filter: withFields(textFields, filter.Fields{"format": filter.String}),
	create: func(c *call, tx store.Tx, in *api.EventDestinationCreate, d *api.EventDestination) (any, error) {
		if err := setText(rules.EventDestinationText, in.Description, in.Metadata, &d.Description, &d.Metadata); err != nil {
			return nil, err
		}
		if err := rules.EventFormat(in.Format); err != nil {
			return nil, err
		}
		if err := rules.EventTarget(in.Target); err != nil {
			return nil, err
		}
		d.Format = *in.Format
		return nil, copyTarget(&d.Target, in.Target)
	},
	update: func(c *call, tx store.Tx, in *api.EventDestinationUpdate, d *api.EventDestination) error {
		if err := setText(rules.EventDestinationText, in.Description, in.Metadata, &d.Description, &d.Metadata); err != nil {
			return err
		}
		if in.Format != nil {
			if err := rules.EventFormat(in.Format); err != nil {
				return err
			}
			d.Format = *in.Format
		}
		if in.Target == nil {
			return nil
		}
		if was, now := rules.EventTargetKind(&d.Target), rules.EventTargetKind(in.Target); len(now) == 1 && !slices.Equal(was, now) {
			return apierr.WithDetail(apierr.BadRequest("ERR_5108", "The target kind cannot change (%s to %s); create another destination.", strings.Join(was, ""), now[0]), "param", "target")
		}
		stored, err := tx.Get(c.r.Context(), kinds.EventDestination, d.ID)
		if err != nil {
			return err
		}
		var kept kinds.DestinationSecret
		if len(stored.Secret) > 0 {
			if err := json.Unmarshal(stored.Secret, &kept); err != nil {
				return err
			}
		}
		var target api.EventTarget
		if err := copyTarget(&target, in.Target); err != nil {
			return err
		}
		for _, f := range kept.Fields(&target) {
			if *f.Wire == "" {
				*f.Wire = *f.Stored
			}
		}
		if err := rules.EventTarget(&target); err != nil {
			return err
		}
		d.Target = target
		return nil
	},
	check: func(w *write[*api.EventDestination]) error {
		// Secrets are given on create and in a PATCH target; otherwise the stored ones stay.
		var old, s kinds.DestinationSecret
		if len(w.secret) > 0 {
			if err := json.Unmarshal(w.secret, &old); err != nil {
				return err
			}
		}
		oldFields := old.Fields(&w.obj.Target)
		for i, f := range s.Fields(&w.obj.Target) {
			if *f.Wire == "" {
				*f.Wire = *oldFields[i].Stored
			}
			*f.Stored, *f.Wire = *f.Wire, ""
		}
		secret, err := json.Marshal(s)
		w.secret = secret
		return err
	},
	inUse: func(c *call, d *api.EventDestination, referrers []*store.Object) error {
		return stillReferenced("ERR_5112", "The event destination "+d.ID, referrers)
	},
}

// eventSubscriptions is /event_subscriptions (details.md §6.15). Its sources are stored in
// the subscription itself, so that its sources member and the /sources sub-endpoints are one
// list; the destinations are refs (ERR_5103 when one is not the account's, ERR_5112 on
// deleting one that is named).
var eventSubscriptions = &family[api.EventSubscription, *api.EventSubscription, api.EventSubscriptionCreate, api.EventSubscriptionUpdate]{
	kind:   kinds.EventSubscription,
	def:    api.EventSubscriptions,
	filter: textFields,
	create: func(c *call, tx store.Tx, in *api.EventSubscriptionCreate, s *api.EventSubscription) (any, error) {
		return nil, setSubscription(c, tx, s, in.Description, in.Metadata, in.Sources, in.DestinationIDs, true)
	},
	update: func(c *call, tx store.Tx, in *api.EventSubscriptionUpdate, s *api.EventSubscription) error {
		return setSubscription(c, tx, s, in.Description, in.Metadata, in.Sources, in.DestinationIDs, false)
	},
	refs: func(s *api.EventSubscription) []string { return api.RefIDs(s.Destinations) },
	render: func(c *call, s *api.EventSubscription) {
		for i := range s.Destinations {
			s.Destinations[i] = c.ref(s.Destinations[i].ID)
		}
		for i := range s.Sources {
			s.Sources[i].URI = sourcesURI(c, s.ID) + "/" + s.Sources[i].Type
		}
	},
	routes: eventSourceRoutes,
}

// setSubscription applies a create or PATCH body; on PATCH a nil list is not given and keeps
// the current one, a given list replaces it.
func setSubscription(c *call, tx store.Tx, s *api.EventSubscription, description, metadata *string, sources []api.EventSourceCreate, destinationIDs []string, create bool) error {
	if err := setText(rules.EventSubscriptionText, description, metadata, &s.Description, &s.Metadata); err != nil {
		return err
	}
	if sources != nil || create {
		types := make([]string, len(sources))
		for i, src := range sources {
			types[i] = deref(src.Type)
		}
		if err := rules.EventSources(types); err != nil {
			return err
		}
		s.Sources = make([]api.EventSource, len(types))
		for i, typ := range types {
			s.Sources[i] = api.EventSource{Type: typ}
		}
	}
	if destinationIDs != nil || create {
		s.Destinations = make([]api.Ref, 0, len(destinationIDs))
		for i, id := range destinationIDs {
			if slices.Contains(destinationIDs[:i], id) {
				return apierr.WithDetail(apierr.BadRequest("ERR_215", "The event destination %s is given more than once.", rules.Quote(id)), "param", "destination_ids")
			}
			if _, err := c.lookup(tx, id, ids.EventDestination); isNotFound(err) {
				return apierr.WithDetail(apierr.BadRequest("ERR_5103", "%s is not an event destination of this account.", rules.Quote(id)), "param", "destination_ids")
			} else if err != nil {
				return err
			}
			s.Destinations = append(s.Destinations, api.Ref{ID: id})
		}
	}
	return nil
}

func sourcesURI(c *call, subscriptionID string) string {
	return c.s.opts.BaseURL + api.EventSubscriptions.Path + "/" + subscriptionID + "/sources"
}

// eventSourceRoutes serves /event_subscriptions/{id}/sources[/{type}] (details.md §6.15) on
// the subscription's own list: each change is a change of the subscription. A type the
// subscription does not have is the plain 404, like any unknown ID.
func eventSourceRoutes(f *family[api.EventSubscription, *api.EventSubscription, api.EventSubscriptionCreate, api.EventSubscriptionUpdate], s *Server, mux *router) {
	path := f.def.Path + "/{id}/sources"
	one := func(c *call, sub *api.EventSubscription) (*api.EventSource, error) {
		typ := c.r.PathValue("type")
		for i := range sub.Sources {
			if sub.Sources[i].Type == typ {
				return &sub.Sources[i], nil
			}
		}
		return nil, apierr.NotFound()
	}
	read := func(c *call) (*api.EventSubscription, error) {
		var sub *api.EventSubscription
		err := c.read(func(tx store.Tx) (err error) {
			sub, _, err = f.load(c, tx)
			return err
		})
		if err != nil {
			return nil, err
		}
		return f.rendered(c, sub, ""), nil
	}
	source := typeOf[api.EventSource]()
	mux.api("POST "+path, op{in: typeOf[api.EventSourceCreate](), out: source, status: created, answersInTx: true}, func(c *call) error {
		var in api.EventSourceCreate
		if _, err := c.decodeBody(&in); err != nil {
			return err
		}
		typ := deref(in.Type)
		if err := rules.EventSourceType(typ); err != nil {
			return err
		}
		var body []byte
		_, err := f.modify(c, func(w *write[*api.EventSubscription]) (err error) {
			types := []string{typ}
			for _, src := range w.obj.Sources {
				types = append(types, src.Type)
			}
			if err := rules.EventSources(types); err != nil {
				return err
			}
			w.obj.Sources = append(w.obj.Sources, api.EventSource{Type: typ})
			// Answered in the transaction, for an Idempotency-Key's record (call.answer).
			if body, err = encodeJSON(api.EventSource{Type: typ, URI: sourcesURI(c, w.obj.ID) + "/" + typ}); err != nil {
				return err
			}
			c.answer(http.StatusCreated, body)
			return nil
		})
		if err != nil {
			return err
		}
		c.writeRaw(http.StatusCreated, body)
		return nil
	})
	mux.api("GET "+path, op{out: typeOf[api.EventSourceList]()}, func(c *call) error {
		sub, err := read(c)
		if err != nil {
			return err
		}
		return c.writeJSON(http.StatusOK, api.EventSourceList{Sources: sub.Sources, URI: sourcesURI(c, sub.ID)})
	})
	getOne := func(c *call) error {
		sub, err := read(c)
		if err != nil {
			return err
		}
		src, err := one(c, sub)
		if err != nil {
			return err
		}
		return c.writeJSON(http.StatusOK, src)
	}
	mux.api("GET "+path+"/{type}", op{out: source}, getOne)
	mux.api("PATCH "+path+"/{type}", op{in: typeOf[api.EventSourceUpdate](), out: source}, func(c *call) error {
		if _, err := c.decodeBody(&api.EventSourceUpdate{}); err != nil {
			return err
		}
		return getOne(c)
	})
	mux.api("DELETE "+path+"/{type}", op{status: noContent}, func(c *call) error {
		_, err := f.modify(c, func(w *write[*api.EventSubscription]) error {
			src, err := one(c, w.obj)
			if err != nil {
				return err
			}
			typ := src.Type
			w.obj.Sources = slices.DeleteFunc(w.obj.Sources, func(s api.EventSource) bool { return s.Type == typ })
			return nil
		})
		if err != nil {
			return err
		}
		return c.noContent()
	})
}
