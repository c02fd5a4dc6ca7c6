package apiserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// family declares one API collection. T is the wire object (P is *T), C and U the create and
// update bodies. The generic handlers below do the CRUD plumbing, paging, filtering, PATCH
// decoding, ownership of accounts and reference bookkeeping; the hooks hold what is
// particular to the family.
type family[T any, P interface {
	*T
	api.Object
}, C any, U any] struct {
	kind   string        // store kind
	def    *api.Family   // path, list member and ID prefix (the table in internal/api)
	filter filter.Fields // filterable fields; nil when the list takes no filter
	// token: create mints a bearer token for the object, returns it once and stores its hash.
	token bool
	// emptyUpdateCode, when set, rejects a PATCH that gives no values (details.md §4).
	emptyUpdateCode string

	// create validates the request and fills obj, whose id and created_at are set. It may
	// return a secret to store beside the object.
	create func(c *call, tx store.Tx, in *C, obj P) (secret any, err error)
	// update validates the request and applies it to obj.
	update func(c *call, tx store.Tx, in *U, obj P) error
	// refs lists the IDs obj references; they must exist and cannot be deleted while it does.
	refs func(obj P) []string
	// unique lists the unique keys obj claims (see store.Object.UniqueKeys).
	unique func(accountID string, obj P) []string
	// duplicate turns a unique-key conflict into the family's error.
	duplicate func(c *call, tx store.Tx, dup *store.DuplicateError) error
	// beforeDelete runs in the delete transaction, e.g. to delete what obj owns.
	beforeDelete func(c *call, tx store.Tx, obj P) error
	// inUse is the family's error for deleting an object that others still reference
	// (e.g. ERR_6502); without it the generic "still referenced" error is used.
	inUse func(c *call, obj P, referrers []*store.Object) error
	// render fills response-only members such as the uri of nested refs.
	render func(c *call, obj P)
	// routes registers the family's extra endpoints (sub-resources), if any.
	routes func(s *Server, mux *http.ServeMux)
}

// collection tells the route table which kind and path the family's IDs belong to.
func (f *family[T, P, C, U]) collection() collection {
	return collection{prefix: f.def.Prefix, kind: f.kind, path: f.def.Path}
}

// register adds the family's five endpoints to the route table.
func (f *family[T, P, C, U]) register(s *Server, mux *http.ServeMux) {
	mux.Handle("POST "+f.def.Path, s.apiRoute(f.handleCreate))
	mux.Handle("GET "+f.def.Path, s.apiRoute(f.handleList))
	mux.Handle("GET "+f.def.Path+"/{id}", s.apiRoute(f.handleGet))
	mux.Handle("PATCH "+f.def.Path+"/{id}", s.apiRoute(f.handleUpdate))
	mux.Handle("DELETE "+f.def.Path+"/{id}", s.apiRoute(f.handleDelete))
	if f.routes != nil {
		f.routes(s, mux)
	}
}

func (f *family[T, P, C, U]) handleCreate(c *call) error {
	var in C
	if _, err := c.decodeBody(&in); err != nil {
		return err
	}
	obj := P(new(T))
	meta := obj.Base()
	meta.ID = ids.New(f.def.Prefix)
	meta.CreatedAt = api.FormatTime(c.s.opts.Now())
	var token string
	err := c.s.opts.Store.Write(c.r.Context(), func(tx store.Tx) error {
		secret, err := f.create(c, tx, &in, obj)
		if err != nil {
			return err
		}
		if f.token {
			token = ids.NewToken(meta.ID)
			secret = tokenSecret{TokenHash: ids.HashToken(token)}
		}
		rec, err := f.record(c.who.accountID, obj, secret)
		if err != nil {
			return err
		}
		return f.storeErr(c, tx, tx.Insert(c.r.Context(), rec))
	})
	if err != nil {
		return err
	}
	if token != "" {
		any(obj).(interface{ SetToken(string) }).SetToken(token)
	}
	return c.writeJSON(http.StatusCreated, f.rendered(c, obj))
}

func (f *family[T, P, C, U]) handleGet(c *call) error {
	var obj P
	err := c.s.opts.Store.Read(c.r.Context(), func(tx store.Tx) (err error) {
		obj, _, err = f.load(c, tx)
		return err
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusOK, f.rendered(c, obj))
}

func (f *family[T, P, C, U]) handleList(c *call) error {
	q, err := c.parseListQuery(f.def.Prefix, f.filter)
	if err != nil {
		return err
	}
	var items []json.RawMessage
	var lastID string
	var more bool
	err = c.s.opts.Store.Read(c.r.Context(), func(tx store.Tx) error {
		objs, hasMore, err := q.page(c, tx, store.ListQuery{Kind: f.kind, AccountID: c.who.accountID})
		if err != nil {
			return err
		}
		more = hasMore
		for _, o := range objs {
			obj, err := f.decode(o)
			if err != nil {
				return err
			}
			item, err := encodeJSON(f.rendered(c, obj))
			if err != nil {
				return err
			}
			items = append(items, item)
			lastID = o.ID
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.writeList(f.def.Path, f.def.Member, q, items, lastID, more)
}

func (f *family[T, P, C, U]) handleUpdate(c *call) error {
	var in U
	members, err := c.decodeBody(&in)
	if err != nil {
		return err
	}
	if f.emptyUpdateCode != "" && !givenValues(members) {
		return badRequest(f.emptyUpdateCode, "The update gives no values to change. Supported parameters: %s.", strings.Join(jsonFields(&in), ", "))
	}
	obj, err := f.modify(c, func(tx store.Tx, obj P) error { return f.update(c, tx, &in, obj) })
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusOK, f.rendered(c, obj))
}

// modify loads the object named by the path, applies change to it and stores it, in one
// write transaction. PATCH uses it, and so can a family's sub-endpoints.
func (f *family[T, P, C, U]) modify(c *call, change func(tx store.Tx, obj P) error) (P, error) {
	var obj P
	err := c.s.opts.Store.Write(c.r.Context(), func(tx store.Tx) error {
		var stored *store.Object
		var err error
		if obj, stored, err = f.load(c, tx); err != nil {
			return err
		}
		if err := change(tx, obj); err != nil {
			return err
		}
		rec, err := f.record(stored.AccountID, obj, nil)
		if err != nil {
			return err
		}
		rec.Secret, rec.ParentID = stored.Secret, stored.ParentID
		return f.storeErr(c, tx, tx.Update(c.r.Context(), rec))
	})
	return obj, err
}

func (f *family[T, P, C, U]) handleDelete(c *call) error {
	err := c.s.opts.Store.Write(c.r.Context(), func(tx store.Tx) error {
		obj, _, err := f.load(c, tx)
		if err != nil {
			return err
		}
		if f.beforeDelete != nil {
			if err := f.beforeDelete(c, tx, obj); err != nil {
				return err
			}
		}
		if f.inUse != nil {
			referrers, err := tx.Referrers(c.r.Context(), obj.Base().ID)
			if err != nil {
				return err
			}
			if len(referrers) > 0 {
				return f.inUse(c, obj, referrers)
			}
		}
		return f.storeErr(c, tx, tx.Delete(c.r.Context(), f.kind, obj.Base().ID))
	})
	if err != nil {
		return err
	}
	return c.noContent()
}

// load reads the object named by the path's {id} in the caller's account. Another
// account's object is a plain 404, exactly like a missing one.
func (f *family[T, P, C, U]) load(c *call, tx store.Tx) (P, *store.Object, error) {
	id := c.r.PathValue("id")
	if !strings.HasPrefix(id, f.def.Prefix) {
		return nil, nil, wrongPrefix("id", id, f.def.Prefix)
	}
	stored, err := tx.Get(c.r.Context(), f.kind, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && stored.AccountID != c.who.accountID) {
		return nil, nil, notFound()
	}
	if err != nil {
		return nil, nil, err
	}
	obj, err := f.decode(stored)
	return obj, stored, err
}

func (f *family[T, P, C, U]) decode(o *store.Object) (P, error) {
	obj := P(new(T))
	return obj, json.Unmarshal(o.Doc, obj)
}

// record builds the stored form of obj: its document without uri members, refs and keys.
func (f *family[T, P, C, U]) record(accountID string, obj P, secret any) (*store.Object, error) {
	obj.Base().URI = ""
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	rec := &store.Object{Kind: f.kind, ID: obj.Base().ID, AccountID: accountID, Doc: doc}
	if secret != nil {
		if rec.Secret, err = json.Marshal(secret); err != nil {
			return nil, err
		}
	}
	if f.refs != nil {
		rec.Refs = f.refs(obj)
	}
	if f.unique != nil {
		rec.UniqueKeys = f.unique(accountID, obj)
	}
	return rec, nil
}

// rendered fills the uri members of obj for a response.
func (f *family[T, P, C, U]) rendered(c *call, obj P) P {
	obj.Base().URI = c.s.opts.BaseURL + f.def.Path + "/" + obj.Base().ID
	if f.render != nil {
		f.render(c, obj)
	}
	return obj
}

// storeErr maps the store's conflicts to API errors.
func (f *family[T, P, C, U]) storeErr(c *call, tx store.Tx, err error) error {
	var dup *store.DuplicateError
	var refd *store.ReferencedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dup) && f.duplicate != nil:
		return f.duplicate(c, tx, dup)
	case errors.As(err, &refd):
		return withDetail(badRequest("ERR_215", "%s is still referenced by %s and cannot be deleted.", refd.ID, strings.Join(refd.ReferrerIDs, ", ")), "referrers", strings.Join(refd.ReferrerIDs, ","))
	case errors.Is(err, store.ErrNotFound):
		return badRequest("ERR_223", "A referenced object does not exist.")
	}
	return err
}

// deref returns *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
