package apiserver

import (
	"bytes"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// Page sizes of details.md §3.1.
const (
	defaultLimit = 100
	maxLimit     = 100
)

// listQuery is a validated list request: before_id, limit and an optional compiled filter.
type listQuery struct {
	beforeID  string
	limit     int
	filter    *filter.Program
	rawFilter string
	extra     url.Values // the values of the extra parameters the caller allowed
	// match, when set, narrows the list beside the filter (an operator's bound endpoints).
	match func(*store.Object) (bool, error)
}

// parseListQuery validates the query string of a list (details.md §3.1): only before_id,
// limit, (where the list has filterable fields) filter and the extra parameters of an
// operator's list, each at most once.
func (c *call) parseListQuery(prefix string, fields filter.Fields, extra ...string) (listQuery, error) {
	q := listQuery{limit: defaultLimit, extra: url.Values{}}
	values, err := url.ParseQuery(c.r.URL.RawQuery)
	if err != nil {
		return q, apierr.BadRequest("ERR_230", "The query string could not be parsed: %s.", rules.Clip(err.Error()))
	}
	for name, vals := range values {
		switch {
		case name != "before_id" && name != "limit" && (name != "filter" || fields == nil) && !slices.Contains(extra, name):
			supported := "before_id, limit"
			if fields != nil {
				supported += ", filter"
			}
			for _, e := range extra {
				supported += ", " + e
			}
			return q, apierr.WithDetail(apierr.BadRequest("ERR_231", "Unknown query parameter %s. Supported parameters: %s.", rules.Quote(name), supported), "param", rules.Clip(name))
		case len(vals) > 1:
			return q, apierr.WithDetail(apierr.BadRequest("ERR_232", "The query parameter %s was given more than once.", rules.Quote(name)), "param", rules.Clip(name))
		}
	}
	for _, name := range extra {
		if v, ok := values[name]; ok {
			q.extra.Set(name, v[0])
		}
	}
	if v, ok := values["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > maxLimit {
			return q, apierr.WithDetail(apierr.BadRequest("ERR_233", "The limit %s must be an integer from 1 to %d.", rules.Quote(v[0]), maxLimit), "param", "limit")
		}
		q.limit = n
	}
	if v, ok := values["before_id"]; ok {
		if !strings.HasPrefix(v[0], prefix) {
			return q, wrongPrefix("before_id", v[0], prefix)
		}
		q.beforeID = v[0]
	}
	if v, ok := values["filter"]; ok {
		prog, err := filter.Compile(v[0], fields)
		if err != nil {
			return q, apierr.WithDetail(apierr.BadRequest("ERR_250", "Invalid CEL query: %s", err), "filter", rules.Clip(v[0]))
		}
		q.filter, q.rawFilter = prog, v[0]
	}
	return q, nil
}

// page reads one page of objects newest first. The filter runs in the database as far as
// it translates (filter.Program.Pushdown); what remains runs here over the rows the database
// selected, read in batches until the page is full. It always looks one match ahead so that
// next_page_uri is null exactly on the last page.
func (q listQuery) page(c *call, tx store.Tx, sq store.ListQuery) (items []*store.Object, more bool, err error) {
	sq.BeforeID, sq.DocsOnly = q.beforeID, true // a page is only rendered
	// One instant for the whole page, in the database and here.
	r := residue{match: q.match, now: time.Now()}
	if q.filter != nil {
		var exact bool
		sq.Where, exact = q.filter.Pushdown(r.now)
		if !exact {
			r.filter = q.filter
		}
	}
	batch := q.limit + 1
	if r.filter != nil || r.match != nil {
		batch = max(batch, 200)
	}
	for {
		sq.Limit = batch
		objs, err := tx.List(c.r.Context(), sq)
		if err != nil {
			return nil, false, err
		}
		for _, o := range objs {
			ok, err := r.matches(o)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				continue
			}
			if len(items) == q.limit {
				return items, true, nil
			}
			items = append(items, o)
		}
		if len(objs) < batch {
			return items, false, nil
		}
		sq.BeforeID = objs[len(objs)-1].ID
	}
}

// residue is what selects objects beside the database: the part of a filter that it could
// not evaluate (then the whole filter, which the rows selected already meet in part), and an
// operator's bound endpoints.
type residue struct {
	filter *filter.Program
	match  func(*store.Object) (bool, error)
	now    time.Time
}

func (r residue) matches(o *store.Object) (bool, error) {
	if r.match != nil {
		if ok, err := r.match(o); !ok || err != nil {
			return false, err
		}
	}
	if r.filter == nil {
		return true, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(o.Doc, &doc); err != nil {
		return false, err
	}
	// Match fails only when a stored object does not fit its declared fields: a server bug.
	return r.filter.MatchAt(doc, r.now)
}

// writeList sends the list envelope {<member>: [...], uri, next_page_uri} (api.md "List
// envelope"). The next page keeps the limit and the filter.
func (c *call) writeList(path, member string, q listQuery, items []json.RawMessage, lastID string, more bool) error {
	listURI := c.s.opts.BaseURL + path
	var next any
	if more {
		v := url.Values{"before_id": {lastID}, "limit": {strconv.Itoa(q.limit)}}
		if q.rawFilter != "" {
			v.Set("filter", q.rawFilter)
		}
		for name, vals := range q.extra {
			v[name] = vals
		}
		next = listURI + "?" + v.Encode()
	}
	var buf bytes.Buffer
	memberJSON, _ := encodeJSON(member)
	size := len(memberJSON) + 2*len(listURI) + 64
	for _, item := range items {
		size += len(item) + 1
	}
	buf.Grow(size) // one allocation for the whole answer
	buf.WriteByte('{')
	buf.Write(memberJSON)
	buf.WriteString(":[")
	for i, item := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(item)
	}
	buf.WriteString("],")
	tail, _ := encodeJSON(struct {
		URI         string `json:"uri"`
		NextPageURI any    `json:"next_page_uri"`
	}{listURI, next})
	buf.Write(tail[1:])
	c.writeRaw(200, buf.Bytes())
	return nil
}

// wrongPrefix is ERR_227: an ID of the wrong kind (details.md §11).
func wrongPrefix(param, id, prefix string) error {
	return apierr.WithDetail(apierr.BadRequest("ERR_227", "The ID %s has the wrong prefix for %s; expected %q.", rules.Quote(id), param, prefix), "param", param)
}
