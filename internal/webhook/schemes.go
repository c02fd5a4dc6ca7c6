package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// token is a shared secret sent as is in a header (GitLab's X-Gitlab-Token).
type token struct{ header string }

func (s token) doc() string              { return "`" + s.header + "` (the secret itself)" }
func (s token) tolerance() time.Duration { return 0 }
func (s token) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		got := r.Header.Get(s.header)
		if got == "" {
			return fmt.Errorf("%w in %s", ErrMissing, s.header)
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(secret)) != 1 {
			return fmt.Errorf("%w (%s)", ErrInvalid, s.header)
		}
		return nil
	}), nil
}

// basicAuth is HTTP Basic authentication with the secret "user::password" (VMware
// Workspace ONE's event notifications).
type basicAuth struct{}

func (basicAuth) doc() string              { return "`Authorization` (Basic; the secret is `username::password`)" }
func (basicAuth) tolerance() time.Duration { return 0 }
func (basicAuth) verifier(secret string, _ Options) (Verifier, error) {
	user, pass, ok := strings.Cut(secret, "::")
	if !ok {
		return nil, errors.New(`the secret must be "username::password"`)
	}
	return verifierFunc(func(_ context.Context, r *Request) error {
		h := &http.Request{Header: r.Header}
		u, p, ok := h.BasicAuth()
		if !ok {
			return fmt.Errorf("%w in Authorization", ErrMissing)
		}
		if subtle.ConstantTimeCompare([]byte(u), []byte(user))&subtle.ConstantTimeCompare([]byte(p), []byte(pass)) != 1 {
			return fmt.Errorf("%w (Authorization)", ErrInvalid)
		}
		return nil
	}), nil
}

// urlParams is Twilio's scheme, which Mailchimp Transactional (Mandrill) shares: a base64
// HMAC-SHA1 of the URL followed by the form parameters sorted by name, each name then its
// value. Twilio signs a JSON body's SHA-256 instead, as the URL's bodySHA256 parameter.
type urlParams struct{ header string }

func (s urlParams) doc() string              { return "`" + s.header + "`" }
func (s urlParams) tolerance() time.Duration { return 0 }
func (s urlParams) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		sig := r.Header.Get(s.header)
		if sig == "" {
			return fmt.Errorf("%w in %s", ErrMissing, s.header)
		}
		var params []byte
		if u, err := url.Parse(r.URL); err == nil && u.Query().Has("bodySHA256") {
			sum := sha256.Sum256(r.Body)
			if !hmac.Equal([]byte(hex.EncodeToString(sum[:])), []byte(strings.ToLower(u.Query().Get("bodySHA256")))) {
				return fmt.Errorf("%w: the body is not the one bodySHA256 signs", ErrInvalid)
			}
		} else if isForm(r) {
			form, err := url.ParseQuery(string(r.Body))
			if err != nil {
				return fmt.Errorf("%w: the form body: %v", ErrInvalid, err)
			}
			for _, k := range slices.Sorted(maps.Keys(form)) {
				values := slices.Clone(form[k])
				slices.Sort(values)
				for _, v := range slices.Compact(values) {
					params = append(params, k+v...)
				}
			}
		}
		got, ok := decode(sig, b64Enc)
		for _, u := range withAndWithoutPort(r.URL) {
			mac := hmac.New(sha1.New, []byte(secret))
			mac.Write([]byte(u))
			mac.Write(params)
			if ok && hmac.Equal(got, mac.Sum(nil)) {
				return nil
			}
		}
		return fmt.Errorf("%w (%s)", ErrInvalid, s.header)
	}), nil
}

// withAndWithoutPort is u, then u with its scheme's default port added or removed: the URL
// a provider signs may name the port or not.
func withAndWithoutPort(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return []string{u}
	}
	def := map[string]string{"https": "443", "http": "80"}[p.Scheme]
	switch p.Port() {
	case "":
		p.Host += ":" + def
	case def:
		p.Host = p.Hostname()
	default:
		return []string{u}
	}
	return []string{u, p.String()}
}

func isForm(r *Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "application/x-www-form-urlencoded"
}

// mailgunBody is Mailgun's scheme: the signature is in the body (a JSON "signature" object,
// or the form fields timestamp, token and signature), a hex HMAC-SHA256 of timestamp then
// token.
type mailgunBody struct{}

func (mailgunBody) doc() string              { return "the body's `signature` (`timestamp`, `token`, `signature`)" }
func (mailgunBody) tolerance() time.Duration { return 0 }
func (mailgunBody) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		var sig struct{ Timestamp, Token, Signature string }
		if isForm(r) {
			form, _ := url.ParseQuery(string(r.Body))
			sig.Timestamp, sig.Token, sig.Signature = form.Get("timestamp"), form.Get("token"), form.Get("signature")
		} else {
			var body struct {
				Signature struct {
					Timestamp json.RawMessage `json:"timestamp"` // a string, or a number in older payloads
					Token     string          `json:"token"`
					Signature string          `json:"signature"`
				} `json:"signature"`
			}
			_ = json.Unmarshal(r.Body, &body)
			sig.Timestamp = strings.Trim(string(body.Signature.Timestamp), `"`)
			sig.Token, sig.Signature = body.Signature.Token, body.Signature.Signature
		}
		if sig.Signature == "" || sig.Timestamp == "" || sig.Token == "" {
			return fmt.Errorf("%w in the body", ErrMissing)
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(sig.Timestamp + sig.Token))
		if got, ok := decode(sig.Signature, hexEnc); ok && hmac.Equal(got, mac.Sum(nil)) {
			return nil
		}
		return fmt.Errorf("%w (the body's signature)", ErrInvalid)
	}), nil
}

// ecdsaSig is SendGrid's Event Webhook scheme: an ECDSA (P-256, SHA-256) signature of the
// timestamp then the body; the secret is the verification key SendGrid shows (base64 of the
// public key's DER, or PEM).
type ecdsaSig struct{ header, tsHeader string }

func (s ecdsaSig) doc() string              { return "`" + s.header + "` and `" + s.tsHeader + "`" }
func (s ecdsaSig) tolerance() time.Duration { return 0 }
func (s ecdsaSig) verifier(secret string, _ Options) (Verifier, error) {
	der := []byte(secret)
	if block, _ := pem.Decode([]byte(secret)); block != nil {
		der = block.Bytes
	} else if b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(secret)); err == nil {
		der = b
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("the verification key is not a public key: %w", err)
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the verification key is a %T, not an ECDSA key", pub)
	}
	return verifierFunc(func(_ context.Context, r *Request) error {
		sig, ts := r.Header.Get(s.header), r.Header.Get(s.tsHeader)
		if sig == "" || ts == "" {
			return fmt.Errorf("%w in %s and %s", ErrMissing, s.header, s.tsHeader)
		}
		der, ok := decode(sig, b64Enc)
		h := sha256.New()
		h.Write([]byte(ts))
		h.Write(r.Body)
		if ok && ecdsa.VerifyASN1(key, h.Sum(nil), der) {
			return nil
		}
		return fmt.Errorf("%w (%s)", ErrInvalid, s.header)
	}), nil
}

// hygraph is Hygraph's (GraphCMS): "sign=<base64>, env=<environment>, t=<ms>", a base64
// HMAC-SHA256 of the JSON {"Body": <the body>, "EnvironmentName": env, "TimeStamp": t}.
type hygraph struct{}

func (hygraph) doc() string              { return "`gcms-signature`" }
func (hygraph) tolerance() time.Duration { return 0 }
func (hygraph) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		raw := r.Header.Get("gcms-signature")
		var sign, env, ts string
		for item := range strings.SplitSeq(raw, ",") {
			k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
			switch k {
			case "sign":
				sign = v
			case "env":
				env = v
			case "t":
				ts = v
			}
		}
		if sign == "" || ts == "" {
			return fmt.Errorf("%w in gcms-signature", ErrMissing)
		}
		t, err := strconv.ParseInt(ts, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: the timestamp %q", ErrInvalid, ts)
		}
		payload, _ := json.Marshal(struct {
			Body            string
			EnvironmentName string
			TimeStamp       int64
		}{string(r.Body), env, t})
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(payload)
		if got, ok := decode(sign, b64Enc); ok && hmac.Equal(got, mac.Sum(nil)) {
			return nil
		}
		return fmt.Errorf("%w (gcms-signature)", ErrInvalid)
	}), nil
}

// contentful is Contentful's request verification: a hex HMAC-SHA256 of the canonical
// request "METHOD\n/path?query\nname:value;name:value\nbody" over the headers that
// x-contentful-signed-headers lists, which must include the timestamp.
type contentful struct{ maxAge time.Duration }

func (s contentful) doc() string {
	return "`x-contentful-signature`, `x-contentful-signed-headers` and `x-contentful-timestamp`"
}
func (s contentful) tolerance() time.Duration { return s.maxAge }
func (s contentful) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		sig, signed := r.Header.Get("x-contentful-signature"), r.Header.Get("x-contentful-signed-headers")
		ts := r.Header.Get("x-contentful-timestamp")
		if sig == "" || signed == "" || ts == "" {
			return fmt.Errorf("%w in x-contentful-signature, x-contentful-signed-headers and x-contentful-timestamp", ErrMissing)
		}
		var names []string
		for n := range strings.SplitSeq(signed, ",") {
			names = append(names, strings.ToLower(strings.TrimSpace(n)))
		}
		if !slices.Contains(names, "x-contentful-timestamp") {
			return fmt.Errorf("%w: the timestamp is not among the signed headers", ErrInvalid)
		}
		at, err := parseTime(ts, unixMillis)
		if err != nil {
			return fmt.Errorf("%w: the timestamp %q", ErrInvalid, ts)
		}
		if err := checkAge(at, r.Now, s.maxAge); err != nil {
			return err
		}
		path := "/"
		if u, err := url.Parse(r.URL); err == nil {
			path = u.RequestURI()
		}
		headers := make([]string, len(names))
		for i, n := range names {
			headers[i] = n + ":" + strings.TrimSpace(r.Header.Get(n))
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(r.Method + "\n" + path + "\n" + strings.Join(headers, ";") + "\n"))
		mac.Write(r.Body)
		if got, ok := decode(sig, hexEnc); ok && hmac.Equal(got, mac.Sum(nil)) {
			return nil
		}
		return fmt.Errorf("%w (x-contentful-signature)", ErrInvalid)
	}), nil
}

type verifierFunc func(ctx context.Context, r *Request) error

func (f verifierFunc) Verify(ctx context.Context, r *Request) error { return f(ctx, r) }

// plivoV3 is Plivo's V3 signature: a base64 HMAC-SHA256 of the URL rebuilt as Plivo's SDKs
// build it (scheme://host/path, then "?" and the query sorted as name=value&…, then for a
// POST "." and the form parameters sorted as namevalue…), then "." and the nonce. The
// header may carry several signatures, comma-separated.
type plivoV3 struct{ header string }

const plivoV3Nonce = "X-Plivo-Signature-V3-Nonce"

func (s plivoV3) doc() string              { return "`" + s.header + "` and `" + plivoV3Nonce + "`" }
func (s plivoV3) tolerance() time.Duration { return 0 }
func (s plivoV3) verifier(secret string, _ Options) (Verifier, error) {
	return verifierFunc(func(_ context.Context, r *Request) error {
		sigs, nonce := r.Header.Get(s.header), r.Header.Get(plivoV3Nonce)
		if sigs == "" || nonce == "" {
			return fmt.Errorf("%w in %s and %s", ErrMissing, s.header, plivoV3Nonce)
		}
		u, err := url.Parse(r.URL)
		if err != nil {
			return fmt.Errorf("%w: the URL: %v", ErrInvalid, err)
		}
		params := map[string]string{}
		if r.Method == http.MethodPost && isForm(r) {
			form, _ := url.ParseQuery(string(r.Body))
			for k, v := range form {
				params[k] = v[0]
			}
		}
		query := map[string]string{}
		for k, v := range u.Query() {
			query[k] = v[0]
		}
		sorted := func(m map[string]string, sep, join string) string {
			var b strings.Builder
			for i, k := range slices.Sorted(maps.Keys(m)) {
				if i > 0 {
					b.WriteString(join)
				}
				b.WriteString(k + sep + m[k])
			}
			return b.String()
		}
		msg := u.Scheme + "://" + u.Host + u.Path
		if len(params) > 0 || len(query) > 0 {
			msg += "?"
		}
		switch {
		case r.Method == http.MethodGet:
			maps.Copy(query, params)
			msg += sorted(query, "=", "&")
		case len(query) > 0:
			msg += strings.TrimRight(sorted(query, "=", "&")+"."+sorted(params, "", ""), ".")
		default:
			msg += sorted(params, "", "")
		}
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(msg + "." + nonce))
		want := mac.Sum(nil)
		for sig := range strings.SplitSeq(sigs, ",") {
			if got, ok := decode(strings.TrimSpace(sig), b64Enc); ok && hmac.Equal(got, want) {
				return nil
			}
		}
		return fmt.Errorf("%w (%s)", ErrInvalid, s.header)
	}), nil
}
