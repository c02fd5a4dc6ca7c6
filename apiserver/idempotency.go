package apiserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Idempotent POSTs. A POST with an Idempotency-Key header runs once per account and key: its
// first answer (status, Content-Type and body) is recorded and replayed, marked with
// Idempotent-Replayed: true, to every repeat within api.IdempotencyTTL. The record is a store
// object (kind idempotency_key) holding the key as a unique key, so the claim is made in its
// own serializable transaction BEFORE the handler runs: of two requests with the same key,
// on one replica or two sharing a database, exactly one runs; the other is told 409 while it
// runs. The claim refers to this replica's lease, so a replica that dies mid-request leaves
// no stuck key: its lease runs out, the sweep deletes the claim, and a retry runs again.

const kindIdempotencyKey = "idempotency_key"

// idempotencyPruneBatch bounds the expired records of an account deleted with each claim.
const idempotencyPruneBatch = 20

// idempotencyDoc is a record's document. Status is 0 while the request runs.
type idempotencyDoc struct {
	Fingerprint string    `json:"fingerprint"` // SHA-256 of method, path and body
	CreatedAt   time.Time `json:"created_at"`  // on the server's clock (Options.Now)
	Status      int       `json:"status,omitempty"`
	ContentType string    `json:"content_type,omitempty"`
	ErrorCode   string    `json:"error_code,omitempty"` // for the access log of a replay
}

// The answer's body lives in the record's secret column: a create that mints a token
// answers with it, and a secret never sits in a document.
type idempotencySecret struct {
	Body []byte `json:"body"`
}

func idempotencyUniqueKey(accountID, key string) string {
	return "idempotency_key:" + accountID + ":" + key
}

// idempotencyKey returns the request's Idempotency-Key, "" when it has none, or ERR_215 when it
// is given twice, empty, longer than api.IdempotencyKeyMaxLen or not printable ASCII.
func (c *call) idempotencyKey() (string, error) {
	values := c.r.Header.Values(api.IdempotencyKeyHeader)
	if len(values) == 0 {
		return "", nil
	}
	bad := func(why string) error {
		return withDetail(badRequest("ERR_215", "The %s header %s; send one value of 1 to %d printable ASCII characters.", api.IdempotencyKeyHeader, why, api.IdempotencyKeyMaxLen), "param", api.IdempotencyKeyHeader)
	}
	if len(values) > 1 {
		return "", bad("is given more than once")
	}
	key := values[0]
	if key == "" || len(key) > api.IdempotencyKeyMaxLen {
		return "", bad("is empty or too long")
	}
	for i := range len(key) {
		if key[i] < 0x20 || key[i] > 0x7e {
			return "", bad("holds a character that is not printable ASCII")
		}
	}
	return key, nil
}

// idempotent runs a POST that carries key at most once, through run (which answers it on c.w),
// or replays its recorded answer.
func (c *call) idempotent(key string, run func()) error {
	raw, err := io.ReadAll(c.r.Body)
	if err != nil {
		return bodyReadError(err)
	}
	c.r.Body = io.NopCloser(bytes.NewReader(raw))
	sum := sha256.New()
	for _, part := range [][]byte{[]byte(c.r.Method), []byte(c.r.URL.RequestURI()), raw} {
		sum.Write(part)
		sum.Write([]byte{0})
	}
	fingerprint := hex.EncodeToString(sum.Sum(nil))

	claimID, replay, err := c.claimIdempotencyKey(key, fingerprint)
	if err != nil {
		return err
	}
	if replay != nil {
		c.replay(replay)
		return nil
	}

	// The handler answers into a buffer, so that the answer is recorded before it is sent.
	real := c.w
	buf := &bufferedResponse{header: http.Header{}}
	c.w = buf
	ctx := context.WithoutCancel(c.r.Context()) // a client that hangs up still gets its record
	defer func() {
		if p := recover(); p != nil {
			c.w = real
			c.releaseIdempotencyKey(ctx, claimID)
			panic(p)
		}
	}()
	run()
	c.w = real

	status := buf.status
	if status == 0 {
		status = http.StatusOK
	}
	if status >= 500 {
		// The server failed, not the request: a retry with the same key runs again.
		c.releaseIdempotencyKey(ctx, claimID)
	} else if err := c.recordIdempotencyKey(ctx, claimID, fingerprint, status, buf); err != nil {
		c.log.Error("idempotency key: recording the answer", zap.Error(err))
		c.releaseIdempotencyKey(ctx, claimID)
	}
	for k, v := range buf.header {
		real.Header()[k] = v
	}
	real.WriteHeader(status)
	_, _ = real.Write(buf.body.Bytes())
	return nil
}

// claimIdempotencyKey inserts the pending record of key in its own transaction, pruning
// expired records of the account on the way, and returns its ID. When the key already has
// a live record, it returns that record to replay, or the error to answer: 422 when the key
// was used for another request, 409 while its request still runs.
func (c *call) claimIdempotencyKey(key, fingerprint string) (claimID string, replay *store.Object, err error) {
	ctx := c.r.Context()
	now := c.s.opts.Now()
	uniqueKey := idempotencyUniqueKey(c.who.accountID, key)
	doc, err := json.Marshal(idempotencyDoc{Fingerprint: fingerprint, CreatedAt: now.UTC()})
	if err != nil {
		return "", nil, err
	}
	replica := c.s.agents.replica
	var refused error
	err = c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		claimID, replay, refused = "", nil, nil
		if err := pruneIdempotencyKeys(ctx, tx, c.who.accountID, now); err != nil {
			return err
		}
		o, err := tx.Lookup(ctx, uniqueKey)
		switch {
		case isNotFound(err):
		case err != nil:
			return err
		default:
			var d idempotencyDoc
			if err := json.Unmarshal(o.Doc, &d); err != nil {
				return err
			}
			switch {
			case !now.Before(d.CreatedAt.Add(api.IdempotencyTTL)):
				// Expired, not yet pruned: the key is free again.
			case d.Fingerprint != fingerprint:
				refused = withDetail(apiErr(http.StatusUnprocessableEntity, "ERR_215", "The %s was already used for a request with another method, path or body; use a new key for a new request.", api.IdempotencyKeyHeader), "param", api.IdempotencyKeyHeader)
				return nil
			case d.Status != 0:
				replay = o
				return nil
			default:
				refused = withDetail(apiErr(http.StatusConflict, "ERR_215", "A request with this %s is still being processed; retry once it has been answered.", api.IdempotencyKeyHeader), "param", api.IdempotencyKeyHeader)
				return nil
			}
			if err := tx.Delete(ctx, o.Kind, o.ID); err != nil {
				return err
			}
		}
		claimID = ids.At(ids.IdempotencyKey, now)
		// The ref to this replica's lease: if the replica dies, the sweep of its lease
		// deletes the claim, so the key does not stay "being processed".
		return tx.Insert(ctx, &store.Object{Kind: kindIdempotencyKey, ID: claimID, AccountID: c.who.accountID,
			Doc: doc, UniqueKeys: []string{uniqueKey}, Refs: []string{replica}})
	})
	if err == nil && refused != nil {
		if ae, ok := refused.(*api.Error); ok && ae.StatusCode == http.StatusConflict {
			c.w.Header().Set(retryAfterHeader, "1")
		}
		err = refused
	}
	var dup *store.DuplicateError
	if errors.As(err, &dup) {
		// Another request claimed the key between our lookup and insert (a store that
		// does not retry that as a serialization failure): it runs, this one waits.
		err = withDetail(apiErr(http.StatusConflict, "ERR_215", "A request with this %s is still being processed; retry once it has been answered.", api.IdempotencyKeyHeader), "param", api.IdempotencyKeyHeader)
		c.w.Header().Set(retryAfterHeader, "1")
	}
	return claimID, replay, err
}

// pruneIdempotencyKeys deletes a batch of the account's expired records. Their IDs carry
// their creation time on the server's clock, so the expired ones are those below one ID.
func pruneIdempotencyKeys(ctx context.Context, tx store.Tx, accountID string, now time.Time) error {
	expired, err := tx.List(ctx, store.ListQuery{Kind: kindIdempotencyKey, AccountID: accountID,
		BeforeID: ids.Before(ids.IdempotencyKey, now.Add(-api.IdempotencyTTL)), Limit: idempotencyPruneBatch})
	if err != nil {
		return err
	}
	for _, o := range expired {
		if err := tx.Delete(ctx, o.Kind, o.ID); err != nil {
			return err
		}
	}
	return nil
}

// recordIdempotencyKey turns the claim into the record of the answer.
func (c *call) recordIdempotencyKey(ctx context.Context, claimID, fingerprint string, status int, buf *bufferedResponse) error {
	var d idempotencyDoc
	secret, err := json.Marshal(idempotencySecret{Body: buf.body.Bytes()})
	if err != nil {
		return err
	}
	return c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kindIdempotencyKey, claimID)
		if err != nil {
			return err // the claim was swept: this replica was taken for dead
		}
		if err := json.Unmarshal(o.Doc, &d); err != nil {
			return err
		}
		d.Status, d.ContentType, d.ErrorCode = status, buf.header.Get("Content-Type"), c.errorCode
		if o.Doc, err = json.Marshal(d); err != nil {
			return err
		}
		o.Secret, o.Refs = secret, nil
		return tx.Update(ctx, o)
	})
}

// releaseIdempotencyKey deletes a claim whose request is to be run again by a retry.
func (c *call) releaseIdempotencyKey(ctx context.Context, claimID string) {
	err := c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		err := tx.Delete(ctx, kindIdempotencyKey, claimID)
		if isNotFound(err) {
			return nil
		}
		return err
	})
	if err != nil {
		c.log.Error("idempotency key: releasing the claim", zap.Error(err))
	}
}

// replay sends a recorded answer again.
func (c *call) replay(o *store.Object) {
	var d idempotencyDoc
	var sec idempotencySecret
	_ = json.Unmarshal(o.Doc, &d) // read when the record was found
	if err := json.Unmarshal(o.Secret, &sec); err != nil {
		c.writeError(err)
		return
	}
	c.errorCode = d.ErrorCode
	if d.ContentType != "" {
		c.w.Header().Set("Content-Type", d.ContentType)
	}
	c.w.Header().Set(api.IdempotentReplayedHeader, "true")
	c.w.WriteHeader(d.Status)
	_, _ = c.w.Write(sec.Body)
}

// bufferedResponse keeps a handler's answer until it is recorded.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
