package webhook

import (
	"context"
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// hmacSig is the scheme most providers share: an HMAC of a message built from the request
// (msg), keyed with the secret, carried in a header in one of a few forms.
type hmacSig struct {
	header string
	form   sigForm
	prefix string // plain: what precedes the signature ("sha256=")
	// pairs: the item names of the signature and the timestamp ("v1", "t").
	sigKey, tsKey string
	// tsHeader is the header of the signed timestamp when it is not in header.
	tsHeader string
	ts       tsForm
	maxAge   time.Duration // 0: the timestamp is signed but its age not checked
	hash     func() hash.Hash
	enc      encoding
	key      keyForm
	// msg is what is signed: literal text and {body}, {ts} (the timestamp as sent),
	// {method}, {url} (scheme, host, path and query), {baseurl} (without the query) and
	// {h:Name} (a header's value).
	msg string
}

type sigForm int

const (
	plain    sigForm = iota // the header's value, after prefix, is the signature
	pairs                   // "t=1492774577,v1=5257a8…,v1=…": comma-separated key=value items
	svixList                // "v1,K5oZfz… v1,3L2Ai…": space-separated version,signature
)

type encoding int

const (
	hexEnc encoding = iota
	b64Enc
)

func (e encoding) String() string { return [...]string{"hex", "base64"}[e] }

type keyForm int

const (
	rawKey    keyForm = iota // the secret's bytes
	base64Key                // the secret is base64 (Microsoft Teams' security token)
	svixKey                  // "whsec_" then base64 (Svix, Clerk, Brex)
)

type tsForm int

const (
	unixSeconds tsForm = iota
	unixMillis
	rfc3339
)

func (s *hmacSig) tolerance() time.Duration { return s.maxAge }

// doc names the headers read: the signature's, the timestamp's and those signed.
func (s *hmacSig) doc() string {
	names := []string{s.header}
	if s.tsHeader != "" {
		names = append(names, s.tsHeader)
	}
	for _, p := range parseTemplate(s.msg) {
		if h, ok := strings.CutPrefix(p.field, "h:"); ok {
			names = append(names, h)
		}
	}
	d := "`" + names[0] + "`"
	for i, n := range names[1:] {
		if i == len(names)-2 {
			d += " and `" + n + "`"
		} else {
			d += ", `" + n + "`"
		}
	}
	return d
}

func (s *hmacSig) verifier(secret string, _ Options) (Verifier, error) {
	key := []byte(secret)
	switch s.key {
	case base64Key:
		k, err := base64.StdEncoding.DecodeString(secret)
		if err != nil {
			return nil, fmt.Errorf("the secret is not base64: %w", err)
		}
		key = k
	case svixKey:
		k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if err != nil {
			return nil, fmt.Errorf("the secret is not whsec_ and base64: %w", err)
		}
		key = k
	}
	return &hmacVerifier{hmacSig: s, key: key, msg: parseTemplate(s.msg)}, nil
}

type hmacVerifier struct {
	*hmacSig
	key []byte
	msg []part
}

func (v *hmacVerifier) Verify(_ context.Context, r *Request) error {
	raw := strings.TrimSpace(r.Header.Get(v.header))
	if raw == "" {
		return fmt.Errorf("%w in %s", ErrMissing, v.header)
	}
	sigs, ts := v.parse(raw)
	if len(sigs) == 0 {
		return fmt.Errorf("%w in %s", ErrMissing, v.header)
	}
	if v.tsHeader != "" {
		ts = strings.TrimSpace(r.Header.Get(v.tsHeader))
	}
	if (v.tsHeader != "" || v.tsKey != "") && ts == "" {
		return fmt.Errorf("%w: no signed timestamp", ErrMissing)
	}
	if ts != "" {
		// A timestamp that is not one is refused even where its age is not checked: the
		// signed message cannot then be shifted between the timestamp and the body.
		at, err := parseTime(ts, v.ts)
		if err != nil {
			return fmt.Errorf("%w: the timestamp %q: %v", ErrInvalid, ts, err)
		}
		if err := checkAge(at, r.Now, v.maxAge); err != nil {
			return err
		}
	}
	mac := hmac.New(v.hash, v.key)
	writeMessage(mac, v.msg, r, ts)
	want := mac.Sum(nil)
	for _, sig := range sigs {
		if got, ok := decode(sig, v.enc); ok && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w (%s)", ErrInvalid, v.header)
}

// parse splits a signature header into its signatures and, for pairs, its timestamp.
func (v *hmacVerifier) parse(raw string) (sigs []string, ts string) {
	switch v.form {
	case pairs:
		for item := range strings.SplitSeq(raw, ",") {
			k, val, ok := strings.Cut(strings.TrimSpace(item), "=")
			switch {
			case !ok:
			case k == v.sigKey:
				sigs = append(sigs, val)
			case k == v.tsKey:
				ts = val
			}
		}
	case svixList:
		for item := range strings.FieldsSeq(raw) {
			if version, sig, ok := strings.Cut(item, ","); ok && version == "v1" {
				sigs = append(sigs, sig)
			}
		}
	default:
		if sig, ok := strings.CutPrefix(raw, v.prefix); ok {
			sigs = append(sigs, strings.TrimSpace(sig))
		}
	}
	return sigs, ts
}

// decode reads a signature as enc; base64 also in its unpadded and URL forms.
func decode(sig string, enc encoding) ([]byte, bool) {
	if enc == hexEnc {
		b, err := hex.DecodeString(sig)
		return b, err == nil
	}
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(sig); err == nil {
			return b, true
		}
	}
	return nil, false
}

func parseTime(ts string, form tsForm) (time.Time, error) {
	if form == rfc3339 {
		return time.Parse(time.RFC3339, ts)
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	if form == unixMillis {
		return time.UnixMilli(n), nil
	}
	return time.Unix(n, 0), nil
}

// part is a piece of a signed message: literal text, or what names a part of the request.
type part struct {
	literal string
	field   string // "body", "ts", "method", "url", "baseurl", "h:<Name>"
}

func parseTemplate(t string) []part {
	var parts []part
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 {
			parts = append(parts, part{literal: t})
			break
		}
		j := strings.IndexByte(t[i:], '}')
		if i > 0 {
			parts = append(parts, part{literal: t[:i]})
		}
		parts = append(parts, part{field: t[i+1 : i+j]})
		t = t[i+j+1:]
	}
	return parts
}

type writer interface{ Write([]byte) (int, error) }

func writeMessage(w writer, parts []part, r *Request, ts string) {
	for _, p := range parts {
		switch {
		case p.field == "":
			w.Write([]byte(p.literal))
		case p.field == "body":
			w.Write(r.Body)
		case p.field == "ts":
			w.Write([]byte(ts))
		case p.field == "method":
			w.Write([]byte(r.Method))
		case p.field == "url":
			w.Write([]byte(r.URL))
		case p.field == "baseurl":
			w.Write([]byte(baseURL(r.URL)))
		case strings.HasPrefix(p.field, "h:"):
			w.Write([]byte(r.Header.Get(p.field[2:])))
		}
	}
}

// baseURL is u without its query.
func baseURL(u string) string {
	if p, err := url.Parse(u); err == nil {
		p.RawQuery, p.ForceQuery = "", false
		return p.String()
	}
	return u
}
