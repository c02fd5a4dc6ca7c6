// Package client is the Go client of the Warren API, built on resty. It sends the
// authentication and version headers, turns error bodies into *Error, retries 429 and 503
// answers and broken connections of idempotent requests (honouring Retry-After, with
// jittered backoff, until a total retry timeout), and follows next_page_uri through lists.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-resty/resty/v2"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Config configures a Client.
type Config struct {
	BaseURL    string       // e.g. "https://warren.example.com"
	APIKey     string       // API key token, sent as a bearer token
	UserAgent  string       // e.g. "terraform-provider-warren/1.0.0"
	HTTPClient *http.Client // optional
	// MaxRetries caps the retries of one request: 0 (the default) for no cap, so that
	// RetryTimeout alone bounds them; negative for no retries at all.
	MaxRetries int
	// RetryTimeout is how long after its first attempt a request may still be retried;
	// default DefaultRetryTimeout (5 minutes). The context's deadline also ends retries.
	RetryTimeout time.Duration
	// MaxBackoff caps the exponential backoff used when the server gives no Retry-After;
	// default DefaultMaxBackoff (10 s). A server's Retry-After is honoured whatever its length.
	MaxBackoff time.Duration
}

// Client talks to one Warren API server. It is safe for concurrent use.
type Client struct {
	http  *resty.Client
	retry retryPolicy

	APIKeys                   *Collection[api.APIKey, api.APIKeyCreate, api.APIKeyUpdate]
	Credentials               *Collection[api.Credential, api.CredentialCreate, api.CredentialUpdate]
	SSHCredentials            *Collection[api.SSHCredential, api.SSHCredentialCreate, api.SSHCredentialUpdate]
	SSHCertificateAuthorities *Collection[api.SSHCertificateAuthority, api.SSHCertificateAuthorityCreate, api.SSHCertificateAuthorityUpdate]
	ServiceUsers              *Collection[api.ServiceUser, api.ServiceUserCreate, api.ServiceUserUpdate]
	TLSCertificates           *Collection[api.TLSCertificate, api.TLSCertificateCreate, api.TLSCertificateUpdate]
	CertificateAuthorities    *Collection[api.CertificateAuthority, api.CertificateAuthorityCreate, api.CertificateAuthorityUpdate]
	ReservedDomains           *Collection[api.ReservedDomain, api.ReservedDomainCreate, api.ReservedDomainUpdate]
	ReservedAddrs             *Collection[api.ReservedAddr, api.ReservedAddrCreate, api.ReservedAddrUpdate]
	IPPolicies                *Collection[api.IPPolicy, api.IPPolicyCreate, api.IPPolicyUpdate]
	IPPolicyRules             *Collection[api.IPPolicyRule, api.IPPolicyRuleCreate, api.IPPolicyRuleUpdate]
	IPRestrictions            *Collection[api.IPRestriction, api.IPRestrictionCreate, api.IPRestrictionUpdate]
	FailoverBackends          *Collection[api.FailoverBackend, api.FailoverBackendCreate, api.FailoverBackendCreate]
	HTTPResponseBackends      *Collection[api.HTTPResponseBackend, api.HTTPResponseBackendCreate, api.HTTPResponseBackendCreate]
	StaticBackends            *Collection[api.StaticBackend, api.StaticBackendCreate, api.StaticBackendCreate]
	TunnelGroupBackends       *Collection[api.TunnelGroupBackend, api.TunnelGroupBackendCreate, api.TunnelGroupBackendCreate]
	WeightedBackends          *Collection[api.WeightedBackend, api.WeightedBackendCreate, api.WeightedBackendCreate]
	HTTPSEdges                *Collection[api.HTTPSEdge, api.HTTPSEdgeCreate, api.HTTPSEdgeCreate]
	TCPEdges                  *Collection[api.TCPEdge, api.TCPEdgeCreate, api.TCPEdgeCreate]
	TLSEdges                  *Collection[api.TLSEdge, api.TLSEdgeCreate, api.TLSEdgeCreate]
	// HTTPSEdgeRoutes live under an edge: HTTPSEdgeRoutes.Under(edgeID). They have no list
	// of their own; an edge's routes member lists them.
	HTTPSEdgeRoutes       *Nested[api.HTTPSEdgeRoute, api.HTTPSEdgeRouteCreate, api.HTTPSEdgeRouteCreate]
	EventDestinations     *Collection[api.EventDestination, api.EventDestinationCreate, api.EventDestinationUpdate]
	EventSubscriptions    *Collection[api.EventSubscription, api.EventSubscriptionCreate, api.EventSubscriptionUpdate]
	OrchestratorOperators *Collection[api.OrchestratorOperator, api.OrchestratorOperatorCreate, api.OrchestratorOperatorUpdate]
	// Agents create these three by connecting; the API only reads them.
	TunnelSessions *TunnelSessions
	Tunnels        *View[api.Tunnel]
	Endpoints      *View[api.Endpoint]
}

// New returns a client for cfg.
func New(cfg Config) *Client {
	if cfg.UserAgent == "" {
		cfg.UserAgent = "warren-go-client"
	}
	httpClient := cfg.HTTPClient
	if httpClient == nil {
		httpClient = &http.Client{Transport: newTransport()}
	}
	hc := resty.NewWithClient(httpClient)
	hc.SetBaseURL(strings.TrimRight(cfg.BaseURL, "/")).
		SetAuthToken(cfg.APIKey).
		SetHeader(api.VersionHeader, api.Version).
		SetHeader("User-Agent", cfg.UserAgent).
		SetHeader("Accept", "application/json").
		// execute retries; resty's own retries stay off.
		SetRetryCount(0).
		// Every error is returned to the caller; resty's own stderr lines would only repeat them.
		SetLogger(quietLogger{})
	c := &Client{http: hc, retry: newRetryPolicy(cfg)}
	c.APIKeys = collection[api.APIKey, api.APIKeyCreate, api.APIKeyUpdate](c, api.APIKeys)
	c.Credentials = collection[api.Credential, api.CredentialCreate, api.CredentialUpdate](c, api.Credentials)
	c.SSHCredentials = collection[api.SSHCredential, api.SSHCredentialCreate, api.SSHCredentialUpdate](c, api.SSHCredentials)
	c.SSHCertificateAuthorities = collection[api.SSHCertificateAuthority, api.SSHCertificateAuthorityCreate, api.SSHCertificateAuthorityUpdate](c, api.SSHCertificateAuthorities)
	c.ServiceUsers = collection[api.ServiceUser, api.ServiceUserCreate, api.ServiceUserUpdate](c, api.ServiceUsers)
	c.TLSCertificates = collection[api.TLSCertificate, api.TLSCertificateCreate, api.TLSCertificateUpdate](c, api.TLSCertificates)
	c.CertificateAuthorities = collection[api.CertificateAuthority, api.CertificateAuthorityCreate, api.CertificateAuthorityUpdate](c, api.CertificateAuthorities)
	c.ReservedDomains = collection[api.ReservedDomain, api.ReservedDomainCreate, api.ReservedDomainUpdate](c, api.ReservedDomains)
	c.ReservedAddrs = collection[api.ReservedAddr, api.ReservedAddrCreate, api.ReservedAddrUpdate](c, api.ReservedAddrs)
	c.IPPolicies = collection[api.IPPolicy, api.IPPolicyCreate, api.IPPolicyUpdate](c, api.IPPolicies)
	c.IPPolicyRules = collection[api.IPPolicyRule, api.IPPolicyRuleCreate, api.IPPolicyRuleUpdate](c, api.IPPolicyRules)
	c.IPRestrictions = collection[api.IPRestriction, api.IPRestrictionCreate, api.IPRestrictionUpdate](c, api.IPRestrictions)
	c.FailoverBackends = collection[api.FailoverBackend, api.FailoverBackendCreate, api.FailoverBackendCreate](c, api.FailoverBackends)
	c.HTTPResponseBackends = collection[api.HTTPResponseBackend, api.HTTPResponseBackendCreate, api.HTTPResponseBackendCreate](c, api.HTTPResponseBackends)
	c.StaticBackends = collection[api.StaticBackend, api.StaticBackendCreate, api.StaticBackendCreate](c, api.StaticBackends)
	c.TunnelGroupBackends = collection[api.TunnelGroupBackend, api.TunnelGroupBackendCreate, api.TunnelGroupBackendCreate](c, api.TunnelGroupBackends)
	c.WeightedBackends = collection[api.WeightedBackend, api.WeightedBackendCreate, api.WeightedBackendCreate](c, api.WeightedBackends)
	c.HTTPSEdges = collection[api.HTTPSEdge, api.HTTPSEdgeCreate, api.HTTPSEdgeCreate](c, api.HTTPSEdges)
	c.TCPEdges = collection[api.TCPEdge, api.TCPEdgeCreate, api.TCPEdgeCreate](c, api.TCPEdges)
	c.TLSEdges = collection[api.TLSEdge, api.TLSEdgeCreate, api.TLSEdgeCreate](c, api.TLSEdges)
	c.EventDestinations = collection[api.EventDestination, api.EventDestinationCreate, api.EventDestinationUpdate](c, api.EventDestinations)
	c.EventSubscriptions = collection[api.EventSubscription, api.EventSubscriptionCreate, api.EventSubscriptionUpdate](c, api.EventSubscriptions)
	c.OrchestratorOperators = collection[api.OrchestratorOperator, api.OrchestratorOperatorCreate, api.OrchestratorOperatorUpdate](c, api.OrchestratorOperators)
	c.TunnelSessions = &TunnelSessions{view[api.TunnelSession](c, api.TunnelSessions)}
	c.Tunnels = view[api.Tunnel](c, api.Tunnels)
	c.Endpoints = view[api.Endpoint](c, api.Endpoints)
	c.HTTPSEdgeRoutes = &Nested[api.HTTPSEdgeRoute, api.HTTPSEdgeRouteCreate, api.HTTPSEdgeRouteCreate]{c: c, family: api.HTTPSEdgeRoutes}
	return c
}

// MaxIdleConnsPerHost is how many idle connections to the server a Client keeps open. Terraform
// runs 10 operations at once by default: resty's own transport keeps GOMAXPROCS+1 (3 on two
// cores), so most calls of a plan or an apply of many resources opened a new connection (and
// a TLS handshake) and left the last one in TIME_WAIT.
const MaxIdleConnsPerHost = 64

// newTransport is http.DefaultTransport's settings (proxy from the environment, HTTP/2, dial
// and handshake timeouts) with MaxIdleConnsPerHost idle connections kept per host.
func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(t.MaxIdleConns, MaxIdleConnsPerHost)
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
}

// quietLogger discards resty's log lines.
type quietLogger struct{}

func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Warnf(string, ...any)  {}
func (quietLogger) Debugf(string, ...any) {}

// Error is an API error answer.
type Error struct {
	HTTPStatus int
	Body       api.Error // the error body: error_code, msg, details
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "warren API: %d", e.HTTPStatus)
	if e.Body.ErrorCode != "" {
		fmt.Fprintf(&b, " %s", e.Body.ErrorCode)
	}
	if e.Body.Msg != "" {
		fmt.Fprintf(&b, ": %s", e.Body.Msg)
	}
	if op := e.Body.Details["operation_id"]; op != "" {
		fmt.Fprintf(&b, " (operation %s)", op)
	}
	return b.String()
}

// Code returns the API error code, e.g. "ERR_600", or "" (404s carry none).
func (e *Error) Code() string { return e.Body.ErrorCode }

// IsNotFound reports whether err is the API's 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
}

// do sends a request (retried as execute says) and decodes a 2xx JSON answer into out (when
// not nil).
func (c *Client) do(ctx context.Context, method, url string, body, out any) error {
	resp, err := c.execute(ctx, method, url, body)
	if err != nil {
		return err
	}
	if resp.IsError() {
		return apiError(resp)
	}
	if out == nil || resp.StatusCode() == http.StatusNoContent {
		return nil
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		return fmt.Errorf("warren API: %s %s: decoding the answer: %w", method, url, err)
	}
	return nil
}

// apiError turns an error answer into *Error; a body that is not the API's error JSON
// becomes the message.
func apiError(resp *resty.Response) *Error {
	e := &Error{HTTPStatus: resp.StatusCode()}
	if json.Unmarshal(resp.Body(), &e.Body) != nil || e.Body.Msg == "" {
		e.Body.Msg = strings.TrimSpace(string(resp.Body()))
		if e.Body.Msg == "" {
			e.Body.Msg = http.StatusText(resp.StatusCode())
		}
	}
	return e
}
