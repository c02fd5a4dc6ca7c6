// Package acmedns is the authoritative DNS server of the zone of the ACME challenge targets,
// acme-challenge.<domain base>, at which the _acme-challenge names of wildcard reserved
// domains point (CNAME), and the TXT records it serves. The records live in the store, so
// that every replica's server answers a DNS-01 validation that any replica's ACME client
// presented.
package acmedns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Bounds of what the zone holds: a DNS-01 value is 43 characters, and a name has one value
// per validation under way (rarely more than two).
const (
	maxValueLen  = 255 // one DNS character-string
	maxNameItems = 16
)

// Records are the TXT records of the zone in the store. They are the libdns provider of
// certmagic's DNS-01 solver (AppendRecords, DeleteRecords) and what the Server answers.
type Records struct {
	store store.Store
	zone  string // canonical: lower case, with the final dot
}

// NewRecords returns the records of zone (e.g. "acme-challenge.example.com") in s.
func NewRecords(s store.Store, zone string) *Records {
	return &Records{store: s, zone: canonical(zone)}
}

// Zone is the zone's name, canonical (lower case, with the final dot).
func (r *Records) Zone() string { return r.zone }

// recordDoc is the document of an ACMEChallengeRecord: a name and its TXT values.
type recordDoc struct {
	Name   string   `json:"name"`
	Values []string `json:"values"`
}

// canonical is name in lower case with its final dot: how the records are keyed.
func canonical(name string) string { return strings.ToLower(dns.Fqdn(name)) }

// idOf is the store ID of a name's record: a hash, so that every replica finds it without
// a lookup.
func idOf(name string) string {
	sum := sha256.Sum256([]byte(name))
	return ids.ACMEChallengeRecord + hex.EncodeToString(sum[:16])
}

// TXT returns the TXT values of name (any case, with or without its final dot).
func (r *Records) TXT(ctx context.Context, name string) ([]string, error) {
	var doc recordDoc
	err := r.store.Read(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.ACMEChallengeRecord, idOf(canonical(name)))
		if err != nil {
			return err
		}
		return json.Unmarshal(o.Doc, &doc)
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return doc.Values, err
}

// AppendRecords adds TXT records to the zone (libdns.RecordAppender).
func (r *Records) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	for _, rec := range recs {
		name, value, err := r.txt(zone, rec)
		if err != nil {
			return nil, err
		}
		if err := r.change(ctx, name, func(values []string) ([]string, error) {
			if slices.Contains(values, value) {
				return values, nil
			}
			if len(values) >= maxNameItems {
				return nil, fmt.Errorf("acmedns: %s has %d TXT values already", name, len(values))
			}
			return append(values, value), nil
		}); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// DeleteRecords removes TXT records from the zone; a record that is not there is no error
// (libdns.RecordDeleter).
func (r *Records) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	for _, rec := range recs {
		name, value, err := r.txt(zone, rec)
		if err != nil {
			return nil, err
		}
		if err := r.change(ctx, name, func(values []string) ([]string, error) {
			return slices.DeleteFunc(values, func(v string) bool { return v == value }), nil
		}); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// txt checks that rec is a TXT record of this zone and returns its canonical name and value.
func (r *Records) txt(zone string, rec libdns.Record) (name, value string, err error) {
	rr := rec.RR()
	name = canonical(libdns.AbsoluteName(rr.Name, dns.Fqdn(zone)))
	switch {
	case !strings.EqualFold(rr.Type, "TXT"):
		return "", "", fmt.Errorf("acmedns: only TXT records are served, not %s", rr.Type)
	case !dns.IsSubDomain(r.zone, name):
		return "", "", fmt.Errorf("acmedns: %s is outside the zone %s", name, r.zone)
	case len(rr.Data) == 0 || len(rr.Data) > maxValueLen:
		return "", "", fmt.Errorf("acmedns: a TXT value of %d bytes (1 to %d)", len(rr.Data), maxValueLen)
	}
	return name, rr.Data, nil
}

// change replaces the TXT values of name by what edit makes of them; none left deletes the
// record.
func (r *Records) change(ctx context.Context, name string, edit func([]string) ([]string, error)) error {
	id := idOf(name)
	return r.store.Write(ctx, func(tx store.Tx) error {
		doc := recordDoc{Name: name}
		o, err := tx.Get(ctx, kinds.ACMEChallengeRecord, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			o = nil
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(o.Doc, &doc); err != nil {
				return err
			}
		}
		values, err := edit(slices.Clone(doc.Values))
		if err != nil {
			return err
		}
		if len(values) == 0 {
			if o == nil {
				return nil
			}
			return tx.Delete(ctx, kinds.ACMEChallengeRecord, id)
		}
		doc.Values = values
		b, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		obj := &store.Object{Kind: kinds.ACMEChallengeRecord, ID: id, Doc: b}
		if o == nil {
			return tx.Insert(ctx, obj)
		}
		return tx.Update(ctx, obj)
	})
}
