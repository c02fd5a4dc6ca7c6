// Package api holds the wire types of the Tunnel and Edge Management API: one struct per
// object and per create/update request, shared by the server and the client, so that field
// names and JSON shapes are written down exactly once.
//
// Conventions (details.md §1, §4): create and update requests use pointers for optional
// scalars, so that an omitted or null member (nil) can be told from a cleared one (""), and
// plain slices and maps, where nil means "omitted" and an empty non-nil value means "clear".
package api

import "time"

// Version is the only accepted value of the Service-Version header.
const Version = "2"

// VersionHeader is the name of the API version header.
const VersionHeader = "Service-Version"

// OperationIDHeader carries the operation id of every response.
const OperationIDHeader = "Service-Operation-Id"

// IdempotencyKeyHeader names a POST: the server runs it once per account and key and
// replays its first answer for IdempotencyTTL. IdempotentReplayedHeader ("true") marks a
// replayed answer. IdempotencyKeyMaxLen bounds the key (printable ASCII).
const (
	IdempotencyKeyHeader     = "Idempotency-Key"
	IdempotentReplayedHeader = "Idempotent-Replayed"
	IdempotencyKeyMaxLen     = 255
	IdempotencyTTL           = 24 * time.Hour
)

// TimeFormat is the timestamp format of the API: RFC 3339, UTC, second precision.
const TimeFormat = "2006-01-02T15:04:05Z"

// FormatTime renders t in the API's timestamp format.
func FormatTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(TimeFormat) }

// Ref points at another object.
type Ref struct {
	ID  string `json:"id"`
	URI string `json:"uri"`
}

// RefIDs are the IDs of refs, in order.
func RefIDs(refs []Ref) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.ID
	}
	return out
}

// Meta holds the members every object has. Wire types embed it so generic code can reach them.
type Meta struct {
	ID        string `json:"id"`
	URI       string `json:"uri"`
	CreatedAt string `json:"created_at"`
}

// Base returns the embedded Meta; it makes every wire object satisfy Object.
func (m *Meta) Base() *Meta { return m }

// Object is implemented by every top-level wire object.
type Object interface{ Base() *Meta }

// Error is the body of every error response (details.md §5.1).
type Error struct {
	ErrorCode  string            `json:"error_code,omitempty"`
	StatusCode int               `json:"status_code"`
	Msg        string            `json:"msg"`
	Details    map[string]string `json:"details"`
}

func (e *Error) Error() string {
	if e.ErrorCode == "" {
		return e.Msg
	}
	return e.ErrorCode + ": " + e.Msg
}

// Page is one page of a list: the items under the collection's member name (decoded by the
// caller), the list's own uri and the next page's uri or nil.
type Page struct {
	URI         string  `json:"uri"`
	NextPageURI *string `json:"next_page_uri"`
}

// String returns a pointer to s, for building requests.
func String(s string) *string { return &s }

// Bool returns a pointer to b.
func Bool(b bool) *bool { return &b }

// Float64 returns a pointer to f.
func Float64(f float64) *float64 { return &f }

// Int64 returns a pointer to n.
func Int64(n int64) *int64 { return &n }
