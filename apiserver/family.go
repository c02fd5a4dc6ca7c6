package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
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
	// hide and reveal keep members the API returns out of the stored document, in the sealed
	// secret column: hide returns a copy of obj without them and the secret with them,
	// leaving obj and secret as they were; reveal puts them back into a decoded object.
	hide   func(obj P, secret []byte) (P, []byte, error)
	reveal func(obj P, secret []byte) error
	// check validates the whole object after a create, a PATCH or a module change, in the
	// write transaction: rules across members and modules, and across siblings. It may add
	// refs to w that the object's members alone do not name (e.g. the reserved domains of
	// hostports).
	check func(w *write[P]) error
	// expand fills members that are read from other objects (an edge's routes) for a
	// response, in the transaction that read or wrote obj; they are never stored.
	expand func(c *call, tx store.Tx, obj P) error
	// modules are the family's modules, each served at <path>/{id}/<name> (modules.go).
	modules []module[P]
	// routes registers the family's extra endpoints (sub-resources), if any.
	routes func(f *family[T, P, C, U], s *Server, mux *router)
}

// collection tells the route table which kind and family the family's IDs belong to.
func (f *family[T, P, C, U]) collection() collection {
	return collection{kind: f.kind, def: f.def, filter: f.filter}
}

// register adds the family's endpoints to the route table: POST and GET <path> (no GET for
// families listed inside their parent), GET, PATCH and DELETE <path>/{id}, and PUT, GET and
// DELETE <path>/{id}/<module> for each module.
func (f *family[T, P, C, U]) register(s *Server, mux *router) {
	obj := typeOf[T]()
	mux.api("POST "+f.def.Path, op{in: typeOf[C](), out: obj, status: created, answersInTx: true}, f.handleCreate)
	if !f.def.NoList {
		mux.api("GET "+f.def.Path, op{out: obj, list: f.def.Member, filter: f.filter != nil}, f.handleList)
	}
	mux.api("GET "+f.def.Path+"/{id}", op{out: obj}, f.handleGet)
	mux.api("PATCH "+f.def.Path+"/{id}", op{in: typeOf[U](), out: obj}, f.handleUpdate)
	mux.api("DELETE "+f.def.Path+"/{id}", op{status: noContent}, f.handleDelete)
	for _, m := range f.modules {
		f.registerModule(s, mux, m)
	}
	if f.routes != nil {
		f.routes(f, s, mux)
	}
}

// write is one object being created or changed in a write transaction, with what the
// generic code keeps beside it: its parent's ID and its secret.
type write[P any] struct {
	c        *call
	tx       store.Tx
	obj      P
	parentID string
	secret   []byte
	refs     []string // refs the check found, beside the family's and the modules'
}

func (f *family[T, P, C, U]) handleCreate(c *call) error {
	req, err := decodeRequest[C](c)
	if err != nil {
		return err
	}
	obj := P(new(T))
	id, createdAt := ids.New(f.def.Prefix), api.FormatTime(c.s.opts.Now())
	var parentID string
	var body []byte
	err = c.write(func(tx store.Tx) (err error) {
		if parentID, err = f.loadParent(c, tx); err != nil {
			return err
		}
		// A retried transaction starts from a fresh object and a fresh request.
		var zero T
		*obj = zero
		obj.Base().ID, obj.Base().CreatedAt = id, createdAt
		in, members, err := req.attempt()
		if err != nil {
			return err
		}
		secret, err := f.create(c, tx, in, obj)
		if err != nil {
			return err
		}
		var token string
		if f.token {
			token = ids.NewToken(id)
			secret = kinds.TokenSecret{TokenHash: ids.HashToken(token)}
		}
		w := &write[P]{c: c, tx: tx, obj: obj, parentID: parentID}
		if secret != nil {
			if w.secret, err = json.Marshal(secret); err != nil {
				return err
			}
		}
		if err := f.applyModules(w, members); err != nil {
			return err
		}
		if err := f.store(w, tx.Insert); err != nil {
			return err
		}
		if err := c.emit(tx, f.def, "created", f.rendered(c, obj, parentID)); err != nil {
			return err
		}
		// The answer is made here, in the transaction, so that an Idempotency-Key's
		// record of it commits with the object (call.answer).
		if token != "" {
			any(obj).(interface{ SetToken(string) }).SetToken(token)
		}
		if body, err = encodeJSON(obj); err != nil {
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
}

func (f *family[T, P, C, U]) handleGet(c *call) error {
	var body json.RawMessage
	err := c.read(func(tx store.Tx) error {
		stored, err := f.loadStored(c, tx)
		if err != nil {
			return err
		}
		body, err = f.view(c, tx, stored)
		return err
	})
	if err != nil {
		return err
	}
	c.writeRaw(http.StatusOK, body)
	return nil
}

// view is the response body of a stored object. Where the family's response is its stored
// document with the uri filled in (no render or expand hook, no modules), it is made from the
// stored bytes (spliceURI); otherwise the document is decoded, expanded and rendered. Both
// give the same bytes.
func (f *family[T, P, C, U]) view(c *call, tx store.Tx, o *store.Object) (json.RawMessage, error) {
	uri := c.s.opts.BaseURL + f.def.PathUnder(o.ParentID) + "/" + o.ID
	if f.render == nil && f.expand == nil && len(f.modules) == 0 {
		if body, ok := spliceURI(o.Doc, o.ID, uri); ok {
			return body, nil
		}
	}
	obj, err := f.decode(o)
	if err == nil {
		err = f.expanded(c, tx, obj)
	}
	if err != nil {
		return nil, err
	}
	return encodeJSON(f.rendered(c, obj, o.ParentID))
}

func (f *family[T, P, C, U]) handleList(c *call) error {
	q, err := c.parseListQuery(f.def.Prefix, f.filter)
	if err != nil {
		return err
	}
	var parentID string
	return c.serveList(q, f.def.Member, func(tx store.Tx) (store.ListQuery, string, error) {
		parentID, err = f.loadParent(c, tx)
		return store.ListQuery{Kind: f.kind, AccountID: c.who.accountID, ParentID: parentID}, f.def.PathUnder(parentID), err
	}, func(tx store.Tx, o *store.Object) (json.RawMessage, error) { return f.view(c, tx, o) })
}

// serveList answers a list request with one page, in one read transaction: selection gives
// the store query and the list's path, item gives the JSON of one object.
func (c *call) serveList(q listQuery, member string, selection func(tx store.Tx) (store.ListQuery, string, error), item func(tx store.Tx, o *store.Object) (json.RawMessage, error)) error {
	var items []json.RawMessage
	var lastID, path string
	var more bool
	err := c.read(func(tx store.Tx) error {
		items, lastID = nil, ""
		sq, p, err := selection(tx)
		if err != nil {
			return err
		}
		path = p
		objs, hasMore, err := q.page(c, tx, sq)
		if err != nil {
			return err
		}
		more = hasMore
		for _, o := range objs {
			raw, err := item(tx, o)
			if err != nil {
				return err
			}
			items = append(items, raw)
			lastID = o.ID
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.writeList(path, member, q, items, lastID, more)
}

func (f *family[T, P, C, U]) handleUpdate(c *call) error {
	req, err := decodeRequest[U](c)
	if err != nil {
		return err
	}
	if f.emptyUpdateCode != "" && !givenValues(req.members) {
		return apierr.BadRequest(f.emptyUpdateCode, "The update gives no values to change. Supported parameters: %s.", strings.Join(jsonFields(req.first), ", "))
	}
	w, err := f.modify(c, func(w *write[P]) error {
		in, members, err := req.attempt()
		if err != nil {
			return err
		}
		if err := f.update(c, w.tx, in, w.obj); err != nil {
			return err
		}
		return f.applyModules(w, members)
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusOK, f.rendered(c, w.obj, w.parentID))
}

// modify loads the object named by the path, applies change to it, checks it and stores it,
// in one write transaction. PATCH uses it, and so do module and other sub-endpoints.
func (f *family[T, P, C, U]) modify(c *call, change func(w *write[P]) error) (*write[P], error) {
	var w *write[P]
	err := c.write(func(tx store.Tx) error {
		obj, stored, err := f.load(c, tx)
		if err != nil {
			return err
		}
		w = &write[P]{c: c, tx: tx, obj: obj, parentID: stored.ParentID, secret: stored.Secret}
		if err := change(w); err != nil {
			return err
		}
		if err := f.store(w, tx.Update); err != nil {
			return err
		}
		// Sub-resource changes (a subscription's sources, a domain's certificate) are
		// changes of their owner: its *_updated event (details.md §9.2).
		return c.emit(tx, f.def, "updated", f.rendered(c, w.obj, w.parentID))
	})
	return w, err
}

// store checks w's object and inserts or updates it.
func (f *family[T, P, C, U]) store(w *write[P], put func(context.Context, *store.Object) error) error {
	w.refs = nil
	if f.check != nil {
		if err := f.check(w); err != nil {
			return err
		}
	}
	stored := w.obj
	if f.hide != nil {
		var err error
		if stored, w.secret, err = f.hide(w.obj, w.secret); err != nil {
			return err
		}
	}
	rec, err := f.record(w.c.who.accountID, stored)
	if err != nil {
		return err
	}
	rec.ParentID, rec.Secret, rec.Refs = w.parentID, w.secret, append(rec.Refs, w.refs...)
	if err := f.storeErr(w.c, w.tx, put(w.c.r.Context(), rec)); err != nil {
		return err
	}
	return f.expanded(w.c, w.tx, w.obj)
}

// expanded runs the expand hook, if any.
func (f *family[T, P, C, U]) expanded(c *call, tx store.Tx, obj P) error {
	if f.expand == nil {
		return nil
	}
	return f.expand(c, tx, obj)
}

func (f *family[T, P, C, U]) handleDelete(c *call) error {
	err := c.write(func(tx store.Tx) error {
		obj, stored, err := f.load(c, tx)
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
		if err := c.deleteChildren(tx, f.def, obj.Base().ID); err != nil {
			return err
		}
		if err := f.storeErr(c, tx, tx.Delete(c.r.Context(), f.kind, obj.Base().ID)); err != nil {
			return err
		}
		return c.emit(tx, f.def, "deleted", f.rendered(c, obj, stored.ParentID))
	})
	if err != nil {
		return err
	}
	return c.noContent()
}

// deleteChildren deletes the objects of the nested families under the object id of def,
// their own children first.
func (c *call) deleteChildren(tx store.Tx, def *api.Family, id string) error {
	for _, child := range c.s.children[def] {
		objs, err := tx.List(c.r.Context(), store.ListQuery{Kind: child.kind, AccountID: c.who.accountID, ParentID: id})
		if err != nil {
			return err
		}
		for _, o := range objs {
			if err := c.deleteChildren(tx, child.def, o.ID); err != nil {
				return err
			}
			if err := tx.Delete(c.r.Context(), o.Kind, o.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadParent checks the parent ID of the path for a nested family: an object of the
// parent family in the caller's account, else the plain 404. It returns "" at the top level.
func (f *family[T, P, C, U]) loadParent(c *call, tx store.Tx) (string, error) {
	parent := f.def.Parent
	if parent == nil {
		return "", nil
	}
	id := c.r.PathValue(f.def.ParentParam)
	if !strings.HasPrefix(id, parent.Prefix) {
		return "", wrongPrefix(f.def.ParentParam, id, parent.Prefix)
	}
	if _, err := c.lookup(tx, id, parent.Prefix); isNotFound(err) {
		return "", apierr.NotFound()
	} else if err != nil {
		return "", err
	}
	return id, nil
}

// load reads the object named by the path's {id} in the caller's account (and under the
// path's parent) and decodes it.
func (f *family[T, P, C, U]) load(c *call, tx store.Tx) (P, *store.Object, error) {
	stored, err := f.loadStored(c, tx)
	if err != nil {
		return nil, nil, err
	}
	obj, err := f.decode(stored)
	return obj, stored, err
}

// loadStored reads the object named by the path's {id} in the caller's account (and under
// the path's parent). Another account's object, or another parent's, is a plain 404, exactly
// like a missing one.
func (f *family[T, P, C, U]) loadStored(c *call, tx store.Tx) (*store.Object, error) {
	parentID, err := f.loadParent(c, tx)
	if err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	if !strings.HasPrefix(id, f.def.Prefix) {
		return nil, wrongPrefix("id", id, f.def.Prefix)
	}
	stored, err := tx.Get(c.r.Context(), f.kind, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (stored.AccountID != c.who.accountID || stored.ParentID != parentID)) {
		return nil, apierr.NotFound()
	}
	return stored, err
}

func (f *family[T, P, C, U]) decode(o *store.Object) (P, error) {
	obj := P(new(T))
	if err := json.Unmarshal(o.Doc, obj); err != nil || f.reveal == nil {
		return obj, err
	}
	return obj, f.reveal(obj, o.Secret)
}

// record builds the stored form of obj: its document without uri members, refs (its own
// and its modules') and keys.
func (f *family[T, P, C, U]) record(accountID string, obj P) (*store.Object, error) {
	obj.Base().URI = ""
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	rec := &store.Object{Kind: f.kind, ID: obj.Base().ID, AccountID: accountID, Doc: doc}
	if f.refs != nil {
		rec.Refs = f.refs(obj)
	}
	for _, m := range f.modules {
		rec.Refs = append(rec.Refs, m.refs(obj)...)
	}
	if f.unique != nil {
		rec.UniqueKeys = f.unique(accountID, obj)
	}
	return rec, nil
}

// rendered fills the uri members of obj for a response.
func (f *family[T, P, C, U]) rendered(c *call, obj P, parentID string) P {
	obj.Base().URI = c.s.opts.BaseURL + f.def.PathUnder(parentID) + "/" + obj.Base().ID
	for _, m := range f.modules {
		m.render(c, obj)
	}
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
		return apierr.WithDetail(apierr.BadRequest("ERR_215", "%s is still referenced by %s and cannot be deleted.", refd.ID, strings.Join(refd.ReferrerIDs, ", ")), "referrers", strings.Join(refd.ReferrerIDs, ","))
	case errors.Is(err, store.ErrNotFound):
		return apierr.BadRequest("ERR_223", "A referenced object does not exist.")
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

// spliceURI returns a stored document, which begins {"id":<id>,"uri":"" (record stores the
// wire form with an empty uri), with uri filled in: the bytes json.Marshal of the decoded
// object would give, without decoding it. It declines (false) a document of another shape and
// one holding a \u escape, since the response encoder spells some of those differently
// (record's json.Marshal writes <, > and & as \u003c…, encodeJSON does not).
func spliceURI(doc []byte, id, uri string) ([]byte, bool) {
	const idKey, uriKey = `{"id":"`, `","uri":""`
	n := len(idKey) + len(id) + len(uriKey)
	if len(doc) < n || string(doc[:len(idKey)]) != idKey || string(doc[len(idKey):len(idKey)+len(id)]) != id ||
		string(doc[len(idKey)+len(id):n]) != uriKey || !plainJSONString(id) || !plainJSONString(uri) ||
		bytes.Contains(doc, []byte(`\u`)) {
		return nil, false
	}
	out := make([]byte, 0, len(doc)+len(uri))
	out = append(out, doc[:n-1]...) // up to the opening quote of the empty uri
	out = append(out, uri...)
	return append(out, doc[n-1:]...), true
}

// plainJSONString reports whether s is written in JSON as itself between quotes.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b > 0x7e || b == '"' || b == '\\' {
			return false
		}
	}
	return true
}
