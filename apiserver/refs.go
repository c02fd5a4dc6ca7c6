package apiserver

import (
	"errors"
	"slices"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// prefixOf returns the prefix of an ID: everything up to its first underscore (ID bodies
// are base62, so the prefix is unambiguous).
func prefixOf(id string) string {
	i := strings.IndexByte(id, '_')
	if i < 0 {
		return ""
	}
	return id[:i+1]
}

// ref returns the Ref of an object: its ID and the absolute uri of its canonical path.
func (c *call) ref(id string) api.Ref { return c.s.ref(id) }

func (s *Server) ref(id string) api.Ref {
	return api.Ref{ID: id, URI: s.opts.BaseURL + s.collections[prefixOf(id)].def.Path + "/" + id}
}

// refList returns the Refs of ids, [] (never null) when there are none.
func (c *call) refList(ids []string) []api.Ref {
	out := make([]api.Ref, 0, len(ids))
	for _, id := range ids {
		out = append(out, c.ref(id))
	}
	return out
}

// lookup finds an object of the caller's account by ID alone, when its prefix is one of
// prefixes. It returns store.ErrNotFound for a missing object, an object of another account
// and an ID with another prefix alike, so callers can answer with their family's code.
func (c *call) lookup(tx store.Tx, id string, prefixes ...string) (*store.Object, error) {
	p := prefixOf(id)
	coll, known := c.s.collections[p]
	if !known || (len(prefixes) > 0 && !slices.Contains(prefixes, p)) {
		return nil, store.ErrNotFound
	}
	obj, err := tx.Get(c.r.Context(), coll.kind, id)
	if err == nil && obj.AccountID != c.who.accountID {
		return nil, store.ErrNotFound
	}
	return obj, err
}

// isNotFound reports whether err is store.ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// stillReferenced is the error of an inUse hook: code, a message saying which objects still
// refer to what (e.g. "The domain app.example.com"), and their IDs in details.referrers.
func stillReferenced(code, what string, referrers []*store.Object) error {
	ids := make([]string, len(referrers))
	for i, r := range referrers {
		ids[i] = r.ID
	}
	e := apierr.BadRequest(code, "%s is still used by %s and cannot be deleted.", what, strings.Join(ids, ", "))
	return apierr.WithDetail(e, "referrers", strings.Join(ids, ","))
}
