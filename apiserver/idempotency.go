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

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// Idempotent POSTs. A POST with an Idempotency-Key header runs once per account and key: its
// first answer (status, Content-Type and body) is recorded and replayed, marked with
// Idempotent-Replayed: true, to every repeat within api.IdempotencyTTL. The record is a store
// object (kind idempotency_key) holding the key as a unique key.
//
// Two ways to run one, chosen by the route (op.answersInTx):
//
//   - In the handler's transaction (every generic create, and the other POSTs that write
//     once and give their answer inside that write with call.answer). Each write transaction
//     of the request first looks the key up (a live record: the request is not run, the
//     record is replayed) and, when the handler gave its answer in it, inserts the record
//     beside the handler's own writes (call.write calls idempotentWrite). So the
//     create and its replayable answer commit together or not at all, and a keyed create
//     costs one write transaction like a plain one. Of two concurrent requests with the
//     key, the serializable transaction of one fails on the other's record and runs again,
//     or meets its unique key: either way it replays the winner's answer. An answer given
//     outside a write (a 4xx before any write, or a write that failed) is recorded in a
//     transaction of its own afterwards, unless a concurrent request recorded first: then
//     that one is replayed.
//   - Claimed before the handler runs (the POSTs that write several times, or not at all but
//     act elsewhere, like a tunnel session's restart): a pending record is inserted in its
//     own serializable transaction, so of two requests with the same key exactly one runs
//     and the other is told 409 while it does; the answer is recorded after. The claim refers
//     to this replica's lease, so a replica that dies mid-request leaves no stuck key: its
//     lease runs out, the sweep deletes the claim, and a retry runs again.

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

// idempotencyKey returns the request's Idempotency-Key, "" when it has none, or ERR_215 when it
// is given twice, empty, longer than api.IdempotencyKeyMaxLen or not printable ASCII.
func (c *call) idempotencyKey() (string, error) {
	values := c.r.Header.Values(api.IdempotencyKeyHeader)
	if len(values) == 0 {
		return "", nil
	}
	bad := func(why string) error {
		return apierr.WithDetail(apierr.BadRequest("ERR_215", "The %s header %s; send one value of 1 to %d printable ASCII characters.", api.IdempotencyKeyHeader, why, api.IdempotencyKeyMaxLen), "param", api.IdempotencyKeyHeader)
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

// keyedRequest is an idempotent POST: its key and fingerprint, and what happened to them.
type keyedRequest struct {
	uniqueKey, fingerprint string
	now                    time.Time
	// inTx: the handler answers in its write transaction (the first way above); the
	// following fields serve it. open is set while one of its write transactions runs,
	// answer is the answer given in it (call.answer), inserted says that its attempt
	// inserted the record, recorded that a transaction holding the record committed.
	inTx               bool
	open               bool
	answer             *keyedAnswer
	inserted, recorded bool
	// taken: the key already had a live record (found, when read in the transaction; nil
	// when it was inserted by a concurrent request that committed first).
	taken bool
	found *store.Object
}

type keyedAnswer struct {
	status int
	body   []byte
}

// errKeyTaken aborts a write transaction of a keyed request whose key has a record: the
// request answers with that record instead. It never reaches the client.
var errKeyTaken = apierr.New(http.StatusConflict, "ERR_215", "The %s has an answer already.", api.IdempotencyKeyHeader)

// idempotent runs a POST that carries key at most once, through run (which answers it on c.w),
// or replays its recorded answer. inTx: the handler gives its answer inside its write
// transaction (call.answer), so the record is written there.
func (c *call) idempotent(key string, inTx bool, run func()) error {
	err := c.runIdempotent(key, inTx, run)
	if e, ok := err.(*api.Error); ok && e.StatusCode == http.StatusConflict {
		c.w.Header().Set(retryAfterHeader, "1")
	}
	return err
}

func (c *call) runIdempotent(key string, inTx bool, run func()) error {
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
	k := &keyedRequest{uniqueKey: kinds.IdempotencyKeyKey(c.who.accountID, key), fingerprint: hex.EncodeToString(sum.Sum(nil)), now: c.s.opts.Now(), inTx: inTx}
	ctx := context.WithoutCancel(c.r.Context()) // a client that hangs up still gets its record

	var claimID string
	if !inTx {
		var replay *store.Object
		if claimID, replay, err = c.claimIdempotencyKey(k); err != nil {
			return err
		}
		if replay != nil {
			c.replay(replay)
			return nil
		}
	}

	// The handler answers into a buffer, so that the answer is recorded before it is sent.
	real := c.w
	buf := &bufferedResponse{header: http.Header{}}
	c.w = buf
	if inTx {
		c.keyed = k // call.write now runs the request's writes through idempotentWrite
	}
	defer func() {
		if p := recover(); p != nil {
			c.w, c.keyed = real, nil
			if claimID != "" {
				c.releaseIdempotencyKey(ctx, claimID)
			}
			panic(p)
		}
	}()
	run()
	c.w, c.keyed = real, nil

	status := buf.status
	if status == 0 {
		status = http.StatusOK
	}
	switch {
	case k.taken:
		// The handler's transaction met the key's record: that is the answer.
		return c.answerTaken(ctx, k)
	case k.recorded:
		// Recorded with the handler's write.
	case !replayable(status) || c.fault:
		// Not the request's own answer (the server failed, or it was told to come back):
		// a retry with the same key runs again.
		if claimID != "" {
			c.releaseIdempotencyKey(ctx, claimID)
		}
	case claimID != "":
		if err := c.recordIdempotencyKey(ctx, claimID, status, buf); err != nil {
			c.log.Error("idempotency key: recording the answer", zap.Error(err))
			c.releaseIdempotencyKey(ctx, claimID)
		}
	default:
		if err := c.recordAnswer(ctx, k, status, buf); err != nil {
			c.log.Error("idempotency key: recording the answer", zap.Error(err))
		}
		if k.taken {
			return c.answerTaken(ctx, k)
		}
	}
	for h, v := range buf.header {
		real.Header()[h] = v
	}
	real.WriteHeader(status)
	_, _ = real.Write(buf.body.Bytes())
	return nil
}

// replayable reports whether an answer of status is the request's own, to be replayed: not
// a 5xx, and none of the 4xx that tell the client to retry (408, 409, 425, 429).
func replayable(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return status < 500
}

// answer gives the answer of a keyed request inside its write transaction (a no-op without
// a key): it is recorded in that transaction, and sent once it commits. body is exactly
// what the handler sends, as JSON, so a replay is byte for byte the first answer.
func (c *call) answer(status int, body []byte) {
	if k := c.keyed; k != nil && k.open {
		k.answer = &keyedAnswer{status: status, body: body}
	}
}

// idempotentWrite wraps fn, a write transaction of a keyed request answered in its own
// transaction: it first looks the key up (a live record aborts the transaction with
// errKeyTaken), and once fn gave the answer (call.answer), inserts the record in the same
// transaction. call.write calls it, and then keyWritten with the result.
func (c *call) idempotentWrite(ctx context.Context, fn func(store.Tx) error) func(store.Tx) error {
	k := c.keyed
	return func(tx store.Tx) error {
		k.answer, k.inserted, k.taken, k.found = nil, false, false, nil // a retry starts afresh
		if o, err := c.liveRecord(ctx, tx, k); err != nil {
			return err
		} else if o != nil {
			k.taken, k.found = true, o
			return errKeyTaken
		}
		k.open = true
		err := fn(tx)
		k.open = false
		if err != nil || k.answer == nil {
			return err
		}
		rec, err := c.newRecord(k, k.answer.status, "application/json", k.answer.body)
		if err != nil {
			return err
		}
		if err := insertRecord(ctx, tx, c.who.accountID, k.now, rec); err != nil {
			return c.keyRace(k, err)
		}
		k.inserted = true
		return nil
	}
}

// keyWritten notes the end of a write transaction wrapped by idempotentWrite.
func (c *call) keyWritten(err error) {
	if k := c.keyed; err == nil && k.inserted {
		k.recorded = true
	}
}

// keyRace turns the unique-key conflict of inserting k's record into errKeyTaken: a
// concurrent request with the key committed its record first.
func (c *call) keyRace(k *keyedRequest, err error) error {
	var dup *store.DuplicateError
	if errors.As(err, &dup) {
		k.taken = true
		return errKeyTaken
	}
	return err
}

// liveRecord returns the key's record when it is live. An expired one is deleted: the key
// is free again.
func (c *call) liveRecord(ctx context.Context, tx store.Tx, k *keyedRequest) (*store.Object, error) {
	o, err := tx.Lookup(ctx, k.uniqueKey)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var d idempotencyDoc
	if err := json.Unmarshal(o.Doc, &d); err != nil {
		return nil, err
	}
	if !k.now.Before(d.CreatedAt.Add(api.IdempotencyTTL)) {
		// Expired, not yet pruned.
		return nil, tx.Delete(ctx, o.Kind, o.ID)
	}
	return o, nil
}

// judge returns what a live record o answers a request with fingerprint: nil to replay it,
// 422 when the key was used for another request, 409 while its request still runs.
func (c *call) judge(o *store.Object, fingerprint string) error {
	var d idempotencyDoc
	if err := json.Unmarshal(o.Doc, &d); err != nil {
		return err
	}
	switch {
	case d.Fingerprint != fingerprint:
		return apierr.WithDetail(apierr.New(http.StatusUnprocessableEntity, "ERR_215", "The %s was already used for a request with another method, path or body; use a new key for a new request.", api.IdempotencyKeyHeader), "param", api.IdempotencyKeyHeader)
	case d.Status == 0:
		return c.stillRunning()
	}
	return nil
}

// stillRunning is the 409 of a key whose request runs (sent with Retry-After).
func (c *call) stillRunning() error {
	return apierr.WithDetail(apierr.New(http.StatusConflict, "ERR_215", "A request with this %s is still being processed; retry once it has been answered.", api.IdempotencyKeyHeader), "param", api.IdempotencyKeyHeader)
}

// answerTaken answers a request whose key has a record: the one found, or the one a
// concurrent request committed, read now.
func (c *call) answerTaken(ctx context.Context, k *keyedRequest) error {
	o := k.found
	if o == nil {
		err := c.s.opts.Store.Read(ctx, func(tx store.Tx) (err error) {
			o, err = c.liveRecord(ctx, tx, k)
			return err
		})
		if err != nil {
			return err
		}
		if o == nil {
			return c.stillRunning() // gone already: a retry runs the request
		}
	}
	if err := c.judge(o, k.fingerprint); err != nil {
		return err
	}
	c.replay(o)
	return nil
}

// recordAnswer records, in its own transaction, the answer of a request answered in its
// transaction that gave its answer outside any write (a 4xx). When a concurrent request
// recorded first, k is marked taken and nothing is written.
func (c *call) recordAnswer(ctx context.Context, k *keyedRequest, status int, buf *bufferedResponse) error {
	rec, err := c.newRecord(k, status, buf.header.Get("Content-Type"), buf.body.Bytes())
	if err != nil {
		return err
	}
	return c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		k.taken, k.found = false, nil
		if o, err := c.liveRecord(ctx, tx, k); err != nil {
			return err
		} else if o != nil {
			k.taken, k.found = true, o
			return nil
		}
		if err := insertRecord(ctx, tx, c.who.accountID, k.now, rec); err != nil {
			if err := c.keyRace(k, err); err != errKeyTaken {
				return err
			}
		}
		return nil
	})
}

// newRecord builds the record of an answer. Its body goes to the secret column: a create
// that mints a token answers with it, and a secret never sits in a document.
func (c *call) newRecord(k *keyedRequest, status int, contentType string, body []byte) (*store.Object, error) {
	doc, err := json.Marshal(idempotencyDoc{Fingerprint: k.fingerprint, CreatedAt: k.now.UTC(), Status: status, ContentType: contentType, ErrorCode: c.errorCode})
	if err != nil {
		return nil, err
	}
	secret, err := json.Marshal(kinds.IdempotencySecret{Body: body})
	if err != nil {
		return nil, err
	}
	return &store.Object{Kind: kinds.IdempotencyKey, ID: ids.At(ids.IdempotencyKey, k.now), AccountID: c.who.accountID,
		Doc: doc, Secret: secret, UniqueKeys: []string{k.uniqueKey}}, nil
}

// insertRecord inserts a record (or a claim), pruning expired records of the account on
// the way.
func insertRecord(ctx context.Context, tx store.Tx, accountID string, now time.Time, rec *store.Object) error {
	if err := pruneIdempotencyKeys(ctx, tx, accountID, now); err != nil {
		return err
	}
	return tx.Insert(ctx, rec)
}

// claimIdempotencyKey inserts the pending record of k in its own transaction, pruning
// expired records of the account on the way, and returns its ID. When the key already has
// a live record, it returns that record to replay, or the error to answer: 422 when the key
// was used for another request, 409 while its request still runs.
func (c *call) claimIdempotencyKey(k *keyedRequest) (claimID string, replay *store.Object, err error) {
	ctx := c.r.Context()
	doc, err := json.Marshal(idempotencyDoc{Fingerprint: k.fingerprint, CreatedAt: k.now.UTC()})
	if err != nil {
		return "", nil, err
	}
	replica := c.s.agents.Replica()
	var refused error
	err = c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		claimID, replay, refused = "", nil, nil
		o, err := c.liveRecord(ctx, tx, k)
		if err != nil {
			return err
		}
		if o != nil {
			if refused = c.judge(o, k.fingerprint); refused == nil {
				replay = o
			}
			return nil
		}
		claimID = ids.At(ids.IdempotencyKey, k.now)
		// The ref to this replica's lease: if the replica dies, the sweep of its lease
		// deletes the claim, so the key does not stay "being processed".
		return insertRecord(ctx, tx, c.who.accountID, k.now, &store.Object{Kind: kinds.IdempotencyKey, ID: claimID,
			AccountID: c.who.accountID, Doc: doc, UniqueKeys: []string{k.uniqueKey}, Refs: []string{replica}})
	})
	if err == nil && refused != nil {
		err = refused
	}
	var dup *store.DuplicateError
	if errors.As(err, &dup) {
		// Another request claimed the key between our lookup and insert (a store that
		// does not retry that as a serialization failure): it runs, this one waits.
		err = c.stillRunning()
	}
	return claimID, replay, err
}

// pruneIdempotencyKeys deletes a batch of the account's expired records. Their IDs carry
// their creation time on the server's clock, so the expired ones are those below one ID.
func pruneIdempotencyKeys(ctx context.Context, tx store.Tx, accountID string, now time.Time) error {
	expired, err := tx.List(ctx, store.ListQuery{Kind: kinds.IdempotencyKey, AccountID: accountID,
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
func (c *call) recordIdempotencyKey(ctx context.Context, claimID string, status int, buf *bufferedResponse) error {
	var d idempotencyDoc
	secret, err := json.Marshal(kinds.IdempotencySecret{Body: buf.body.Bytes()})
	if err != nil {
		return err
	}
	return c.s.opts.Store.Write(ctx, func(tx store.Tx) error {
		o, err := tx.Get(ctx, kinds.IdempotencyKey, claimID)
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
		err := tx.Delete(ctx, kinds.IdempotencyKey, claimID)
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
	var sec kinds.IdempotencySecret
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
