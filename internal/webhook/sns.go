package webhook

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// Amazon SNS signs each message (notifications and subscription confirmations alike) with
// the private key of a certificate it publishes at the message's SigningCertURL: RSA with
// SHA1 (SignatureVersion 1) or SHA256 (2) over the message's fields, each name then its
// value on their own lines. The certificate is only fetched from an SNS host over HTTPS.

const (
	// maxCertBytes bounds a signing certificate's download.
	maxCertBytes = 64 << 10
	// certFetchTimeout bounds fetching one.
	certFetchTimeout = 10 * time.Second
	// maxCachedCerts bounds the cache (SNS uses a handful of certificates per region).
	maxCachedCerts = 256
)

// snsHost is an SNS endpoint: sns.<region>.amazonaws.com, or .amazonaws.com.cn in China.
var snsHost = regexp.MustCompile(`^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$`)

// SNSCerts fetches SNS signing certificates from allowed hosts and caches them.
type SNSCerts struct {
	host   string // the one allowed host[:port]; "" for SNS's own
	client *http.Client
	group  singleflight.Group // one fetch per URL at a time
	mu     sync.Mutex
	certs  map[string]*rsa.PublicKey
}

// NewSNSCerts returns a certificate cache that fetches from host (host or host:port; ""
// for sns.<region>.amazonaws.com) with client (nil for one with the system's roots).
func NewSNSCerts(host string, client *http.Client) *SNSCerts {
	if client == nil {
		client = &http.Client{}
	}
	return &SNSCerts{host: host, client: client, certs: map[string]*rsa.PublicKey{}}
}

var defaultSNSCerts = NewSNSCerts("", nil)

// key returns the public key of the certificate at rawURL, fetched once.
func (c *SNSCerts) key(ctx context.Context, rawURL string) (*rsa.PublicKey, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.User != nil {
		return nil, fmt.Errorf("%w: SigningCertURL %q is not an https URL", ErrInvalid, rawURL)
	}
	if c.host != "" && u.Host != c.host || c.host == "" && (u.Port() != "" || !snsHost.MatchString(u.Hostname())) {
		return nil, fmt.Errorf("%w: SigningCertURL %q is not on an SNS host", ErrInvalid, rawURL)
	}
	if key := c.cached(rawURL); key != nil {
		return key, nil
	}
	v, err, _ := c.group.Do(rawURL, func() (any, error) {
		if key := c.cached(rawURL); key != nil {
			return key, nil // fetched by a call that ended while this one waited to start
		}
		// Not the visitor's context: the fetch serves every request waiting on it.
		key, err := c.fetch(context.WithoutCancel(ctx), rawURL)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if len(c.certs) >= maxCachedCerts {
			clear(c.certs)
		}
		c.certs[rawURL] = key
		c.mu.Unlock()
		return key, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*rsa.PublicKey), nil
}

func (c *SNSCerts) cached(rawURL string) *rsa.PublicKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.certs[rawURL]
}

func (c *SNSCerts) fetch(ctx context.Context, rawURL string) (*rsa.PublicKey, error) {
	ctx, cancel := context.WithTimeout(ctx, certFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching the SNS signing certificate: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching the SNS signing certificate: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCertBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching the SNS signing certificate: %w", err)
	}
	if len(data) > maxCertBytes {
		return nil, fmt.Errorf("the SNS signing certificate is over %d bytes", maxCertBytes)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("the SNS signing certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("the SNS signing certificate: %w", err)
	}
	key, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the SNS signing certificate has a %T key, not RSA", cert.PublicKey)
	}
	return key, nil
}

// snsMessage is an SNS message as posted to an HTTP(S) subscriber.
type snsMessage struct {
	Type, MessageId, Token, TopicArn, Subject, Message, SubscribeURL, Timestamp string
	SignatureVersion, Signature, SigningCertURL                                 string
}

// stringToSign is the message's signed text: these fields, in this order, when present.
func (m *snsMessage) stringToSign() (string, error) {
	var fields []string
	switch m.Type {
	case "Notification":
		fields = []string{"Message", m.Message, "MessageId", m.MessageId, "Subject", m.Subject,
			"Timestamp", m.Timestamp, "TopicArn", m.TopicArn, "Type", m.Type}
	case "SubscriptionConfirmation", "UnsubscribeConfirmation":
		fields = []string{"Message", m.Message, "MessageId", m.MessageId, "SubscribeURL", m.SubscribeURL,
			"Timestamp", m.Timestamp, "Token", m.Token, "TopicArn", m.TopicArn, "Type", m.Type}
	default:
		return "", fmt.Errorf("%w: an SNS message of type %q", ErrInvalid, m.Type)
	}
	var b strings.Builder
	for i := 0; i < len(fields); i += 2 {
		if fields[i] == "Subject" && fields[i+1] == "" {
			continue // a notification without a subject leaves it out
		}
		b.WriteString(fields[i] + "\n" + fields[i+1] + "\n")
	}
	return b.String(), nil
}

type snsVerifier struct{ certs *SNSCerts }

func (v *snsVerifier) Verify(ctx context.Context, r *Request) error {
	var m snsMessage
	if err := json.Unmarshal(r.Body, &m); err != nil || m.Signature == "" {
		return fmt.Errorf("%w: the body is not a signed SNS message", ErrMissing)
	}
	text, err := m.stringToSign()
	if err != nil {
		return err
	}
	var sum []byte
	var h crypto.Hash
	switch m.SignatureVersion {
	case "1":
		s := sha1.Sum([]byte(text))
		sum, h = s[:], crypto.SHA1
	case "2":
		s := sha256.Sum256([]byte(text))
		sum, h = s[:], crypto.SHA256
	default:
		return fmt.Errorf("%w: SignatureVersion %q", ErrInvalid, m.SignatureVersion)
	}
	sig, ok := decode(m.Signature, b64Enc)
	if !ok {
		return fmt.Errorf("%w: the Signature is not base64", ErrInvalid)
	}
	key, err := v.certs.key(ctx, m.SigningCertURL)
	if err != nil {
		return err
	}
	if rsa.VerifyPKCS1v15(key, h, sum, sig) != nil {
		return fmt.Errorf("%w (the SNS message's Signature)", ErrInvalid)
	}
	return nil
}

// snsScheme is SNS's entry of the table: no secret, the certificates of Options.SNS.
type snsScheme struct{}

func (snsScheme) doc() string {
	return "the body's `Signature`, against the certificate at `SigningCertURL` (only from `sns.<region>.amazonaws.com`)"
}
func (snsScheme) tolerance() time.Duration { return 0 }
func (snsScheme) verifier(_ string, opts Options) (Verifier, error) {
	certs := opts.SNS
	if certs == nil {
		certs = defaultSNSCerts
	}
	return &snsVerifier{certs: certs}, nil
}
