// Package webhook verifies that a request was signed by the webhook provider it claims to
// come from, the way that provider signs: its header, the payload it signs (the body, a
// timestamp and the body, the URL and the form parameters …), its algorithm and encoding,
// and its timestamp tolerance. Most providers share a few schemes; providers.go is the one
// table of providers and the parameters of their scheme, the scheme files the code.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Request is what a verifier reads of one request.
type Request struct {
	Method string
	// URL is the URL the provider called, as it signed it: scheme, host, path and query
	// ("https://hooks.example.com/twilio?x=1").
	URL    string
	Header http.Header
	Body   []byte
	Now    time.Time
}

// Verifier checks one request; a nil error means the provider signed it.
type Verifier interface {
	Verify(ctx context.Context, r *Request) error
}

// The reasons a request is refused. Verify wraps them with what was wrong.
var (
	// ErrMissing: the request carries no signature where the provider puts it.
	ErrMissing = errors.New("no signature")
	// ErrInvalid: the signature does not match the request.
	ErrInvalid = errors.New("the signature does not match")
	// ErrStale: the signed timestamp is outside the provider's tolerance.
	ErrStale = errors.New("the signed timestamp is outside the tolerance")
	// ErrUnsupported: the provider's scheme is not known; its requests are all refused.
	ErrUnsupported = errors.New("the provider's signature scheme is not supported")
)

// Options are what a verifier needs beyond its provider and secret.
type Options struct {
	// SNS fetches and caches the signing certificates of Amazon SNS; nil for the default
	// (certificates only from sns.<region>.amazonaws.com, over HTTPS).
	SNS *SNSCerts
}

// New returns the verifier of provider (any case) with secret. An unknown provider, or one
// whose scheme is not known, gives ErrUnsupported; a secret the scheme cannot use (a
// SendGrid verification key that is not a public key) an error naming the provider.
func New(provider, secret string, opts Options) (Verifier, error) {
	v, err := build(provider, secret, opts)
	if err != nil {
		return nil, fmt.Errorf("webhook: %s: %w", provider, err)
	}
	return v, nil
}

func build(provider, secret string, opts Options) (Verifier, error) {
	p := providers[strings.ToLower(provider)]
	if p.schemes == nil {
		return nil, ErrUnsupported
	}
	var vs anyOf
	for _, s := range p.schemes {
		v, err := s.verifier(secret, opts)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
	}
	if len(vs) == 1 {
		return vs[0], nil
	}
	return vs, nil
}

// CheckSecret says why secret cannot verify provider's requests (a SendGrid key that is not
// a public key, a VMware secret without "::" …), nil when it can or the provider's scheme
// is not known: for the API to refuse a module that could never let a request through.
func CheckSecret(provider, secret string) error {
	if _, err := build(provider, secret, Options{}); err != nil && !errors.Is(err, ErrUnsupported) {
		return err
	}
	return nil
}

// scheme is a provider's way of signing, compiled with a secret into a verifier.
type scheme interface {
	verifier(secret string, opts Options) (Verifier, error)
	// doc says where the signature is, for the documentation table.
	doc() string
	// tolerance is how far the signed timestamp may be from now; 0 when none is checked.
	tolerance() time.Duration
}

// anyOf passes a request one of its verifiers passes: a provider that signs one way or
// another (a newer header and an older one, a signature or a token). The error is the
// first verifier's unless a later one found a signature to check.
type anyOf []Verifier

func (vs anyOf) Verify(ctx context.Context, r *Request) error {
	var first error
	for _, v := range vs {
		err := v.Verify(ctx, r)
		if err == nil {
			return nil
		}
		if first == nil || errors.Is(first, ErrMissing) && !errors.Is(err, ErrMissing) {
			first = err
		}
	}
	return first
}

// Tolerance is the timestamp tolerance of provider's first scheme that has one; 0 when its
// requests carry no timestamp that is checked.
func Tolerance(provider string) time.Duration {
	for _, s := range providers[strings.ToLower(provider)].schemes {
		if t := s.tolerance(); t > 0 {
			return t
		}
	}
	return 0
}

// checkAge refuses a timestamp further than tolerance from now (either way: a clock ahead
// of ours is as suspect as a replay).
func checkAge(ts, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		return nil
	}
	if d := now.Sub(ts); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrStale, ts.UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)
	}
	return nil
}

// Where says where provider's requests carry their signature (the documentation's table);
// "" for a provider whose scheme is not known.
func Where(provider string) string {
	var where []string
	for _, s := range providers[strings.ToLower(provider)].schemes {
		if d := s.doc(); !slices.Contains(where, d) {
			where = append(where, d)
		}
	}
	return strings.Join(where, ", or ")
}
