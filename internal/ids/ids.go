// Package ids makes the API's prefixed, time-sortable identifiers and its bearer tokens.
//
// An ID is a prefix from details.md §11 followed by a 27-character KSUID body. KSUIDs sort
// by creation second; within one process New also keeps them strictly increasing, so that
// "newest first" equals "descending ID" even for objects created in the same second.
package ids

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/ksuid"
)

// Prefixes of the objects this server issues (details.md §11).
const (
	APIKey                  = "ak_"
	Credential              = "cr_"
	SSHCredential           = "sshcr_"
	SSHCertificateAuthority = "sshca_"
	TLSCertificate          = "cert_"
	ReservedDomain          = "rd_"
	ReservedAddr            = "ra_"
	CertificateAuthority    = "ca_"
	IPPolicy                = "ipp_"
	IPPolicyRule            = "ipr_"
	IPRestriction           = "ipx_"
	FailoverBackend         = "bkdfo_"
	HTTPResponseBackend     = "bkdhr_"
	StaticBackend           = "bkdsc_"
	TunnelGroupBackend      = "bkdtg_"
	WeightedBackend         = "bkdwd_"
	HTTPSEdge               = "edghts_"
	TCPEdge                 = "edgtcp_"
	TLSEdge                 = "edgtls_"
	HTTPSEdgeRoute          = "edghtsrt_"
	EventDestination        = "ed_"
	EventSubscription       = "esb_"
	Event                   = "ev_"
	EventDelivery           = "evd_" // not in §11: deliveries are Warren's own (/_admin/deliveries)
	ServiceUser             = "service_"
	BotUser                 = "bot_"
	User                    = "usr_"
	Account                 = "ac_"
	Operation               = "op_"
	TunnelSession           = "ts_"
	Tunnel                  = "tn_"
	Endpoint                = "ep_"
	AgentCommand            = "agcmd_" // not in §11: a session command on its way between replicas
	AgentReplica            = "agrep_" // not in §11: a replica's liveness lease over the sessions it holds
	AgentBind               = "agbnd_" // not in §11: a hostport held by one agent instance's tunnels
	// ACMEItem and ACMELock: not in §11, the ACME client's storage; their bodies are a hash
	// of the item's key or the lock's name, so that replicas agree on them without a lookup.
	ACMEItem = "acmei_"
	ACMELock = "acmel_"
	// ACMEChallengeRecord: not in §11, a TXT record of Warren's DNS server; its body is a
	// hash of the record's name.
	ACMEChallengeRecord = "acmec_"
	// OrchestratorOperator is a neutral prefix: the public one is orchestrator-branded (§11).
	OrchestratorOperator = "orop_"
	OperatorCA           = "opca_" // not in §11: the per-account CA that signs operator CSRs
	// IdempotencyKey: not in §11, the record of a POST made with an Idempotency-Key.
	IdempotencyKey = "idem_"
)

// BodyLen is the length of the KSUID body that follows a prefix.
const BodyLen = 27

// SecretLen is the length of the random second part of a token.
const SecretLen = 21

var (
	mu   sync.Mutex
	last ksuid.KSUID
)

// New returns a fresh ID with the given prefix, greater than every ID this process made before.
func New(prefix string) string {
	mu.Lock()
	defer mu.Unlock()
	id := ksuid.New()
	if ksuid.Compare(id, last) <= 0 {
		id = last.Next()
	}
	last = id
	return prefix + id.String()
}

// At returns a fresh ID with the given prefix whose time part is t rather than now, so that
// the IDs of records that expire by a clock of their own sort by that clock.
func At(prefix string, t time.Time) string {
	id, err := ksuid.NewRandomWithTime(t)
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + id.String()
}

// Before returns the lowest ID with the given prefix and time part t: every ID made by At
// at an earlier second sorts below it.
func Before(prefix string, t time.Time) string {
	id, err := ksuid.FromParts(t, make([]byte, 16))
	if err != nil {
		panic(err) // only a payload of the wrong size fails
	}
	return prefix + id.String()
}

// Body returns the part of id after its prefix, or "" when id does not start with prefix.
func Body(id, prefix string) string {
	body, ok := strings.CutPrefix(id, prefix)
	if !ok {
		return ""
	}
	return body
}

// Valid reports whether id is prefix followed by a well-formed KSUID body.
func Valid(id, prefix string) bool {
	body := Body(id, prefix)
	if len(body) != BodyLen {
		return false
	}
	_, err := ksuid.Parse(body)
	return err == nil
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// NewToken returns a bearer token for the object id: "<id body>_<21 base62 characters>".
func NewToken(id string) string {
	_, body, _ := strings.Cut(id, "_")
	var b strings.Builder
	b.WriteString(body)
	b.WriteByte('_')
	max := big.NewInt(int64(len(base62)))
	for range SecretLen {
		n, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b.WriteByte(base62[n.Int64()])
	}
	return b.String()
}

// SplitToken splits a token of the FIRSTPART_SECONDPART shape into the ID body and the
// secret. ok is false when the shape is wrong.
func SplitToken(token string) (body, secret string, ok bool) {
	body, secret, found := strings.Cut(token, "_")
	if !found || len(body) != BodyLen || len(secret) != SecretLen || strings.ContainsRune(secret, '_') {
		return "", "", false
	}
	if _, err := ksuid.Parse(body); err != nil {
		return "", "", false
	}
	for _, c := range secret {
		if !strings.ContainsRune(base62, c) {
			return "", "", false
		}
	}
	return body, secret, true
}

// HashToken returns the hex SHA-256 of a token, the only form in which tokens are stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenMatches compares a presented token with a stored hash in constant time.
func TokenMatches(token, hash string) bool {
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(hash)) == 1
}
