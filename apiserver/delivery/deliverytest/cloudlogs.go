package deliverytest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// CloudLogsScope is the scope a token for the Logs Ingestion API must be asked for.
const CloudLogsScope = "https://monitor.azure.com//.default"

// CloudLogs fakes both halves of the cloud_logs_ingestion target on one TLS server (the
// identity library and the bearer-token policy refuse plain HTTP):
//
//   - the identity authority: the tenant's OpenID configuration (what the identity library
//     reads when instance discovery is off) and its OAuth2 v2.0 token endpoint, which issues
//     a fresh random token for a client-credentials grant of the right client id and secret;
//   - the Logs Ingestion API: POST /dataCollectionRules/{rule}/streams/{stream}, which takes
//     only a token it issued, records each record's Event as the payload and answers 204.
type CloudLogs struct {
	Recorder
	// AuthorityHost is the identity authority, for delivery.Endpoints.IdentityAuthority.
	AuthorityHost string
	// IngestionURI is the logs_ingestion_uri of a target.
	IngestionURI string
	// RuleID and Stream are the only data collection rule and stream the fake serves.
	RuleID, Stream string
	// HTTPClient trusts the fake's certificate, for delivery.Options.HTTPClient.
	HTTPClient *http.Client

	tenant, clientID, secret string

	mu            sync.Mutex
	tokens        map[string]bool
	tokenRequests int
	uploads       int
	records       []map[string]json.RawMessage
}

// NewCloudLogs starts the fake; it stops when the test ends.
func NewCloudLogs(t testing.TB, tenantID, clientID, clientSecret string) *CloudLogs {
	f := &CloudLogs{
		RuleID:   "dcr-" + cloudLogsRandomHex(16),
		Stream:   "Custom-WarrenEvents",
		tenant:   tenantID,
		clientID: clientID,
		secret:   clientSecret,
		tokens:   map[string]bool{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", f.openIDConfiguration)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", f.token)
	mux.HandleFunc("POST /dataCollectionRules/{rule}/streams/{stream}", f.upload)
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	f.AuthorityHost = srv.URL + "/"
	f.IngestionURI = srv.URL
	f.HTTPClient = srv.Client()
	return f
}

func (f *CloudLogs) openIDConfiguration(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("tenant") != f.tenant {
		oauthError(w, http.StatusBadRequest, "invalid_tenant", "AADSTS90002: Tenant not found.")
		return
	}
	base := "https://" + r.Host + "/" + f.tenant
	cloudLogsJSON(w, http.StatusOK, map[string]string{
		"authorization_endpoint": base + "/oauth2/v2.0/authorize",
		"token_endpoint":         base + "/oauth2/v2.0/token",
		"issuer":                 base + "/v2.0",
	})
}

func (f *CloudLogs) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tokenRequests++
	f.mu.Unlock()
	if r.PathValue("tenant") != f.tenant {
		oauthError(w, http.StatusBadRequest, "invalid_tenant", "AADSTS90002: Tenant not found.")
		return
	}
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	switch {
	case r.PostForm.Get("grant_type") != "client_credentials":
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "only client_credentials")
		return
	case !slices.Contains(strings.Fields(r.PostForm.Get("scope")), CloudLogsScope):
		// The identity library adds the OpenID scopes (openid, profile, offline_access).
		oauthError(w, http.StatusBadRequest, "invalid_scope", "AADSTS70011: The provided value for scope is not valid.")
		return
	case r.PostForm.Get("client_id") != f.clientID || r.PostForm.Get("client_secret") != f.secret:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "AADSTS7000215: Invalid client secret provided.")
		return
	}
	tok := cloudLogsRandomHex(32)
	f.mu.Lock()
	f.tokens[tok] = true
	f.mu.Unlock()
	cloudLogsJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "expires_in": 3600, "access_token": tok})
}

func (f *CloudLogs) upload(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.uploads++
	f.mu.Unlock()
	if f.Refuse() {
		Unavailable(w)
		return
	}
	tok, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	issued := bearer && f.tokens[tok]
	f.mu.Unlock()
	if !issued {
		ingestionError(w, http.StatusUnauthorized, "InvalidToken", "the bearer token was not issued by the identity authority")
		return
	}
	if r.PathValue("rule") != f.RuleID || r.PathValue("stream") != f.Stream {
		ingestionError(w, http.StatusNotFound, "NotFound", "no such data collection rule or stream")
		return
	}
	if r.URL.Query().Get("api-version") != "2023-01-01" {
		ingestionError(w, http.StatusBadRequest, "InvalidApiVersion", "unsupported api-version")
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		ingestionError(w, http.StatusUnsupportedMediaType, "UnsupportedMediaType", "send application/json")
		return
	}
	var records []map[string]json.RawMessage
	body, err := io.ReadAll(r.Body)
	if err == nil && len(body) > 1<<20 {
		ingestionError(w, http.StatusRequestEntityTooLarge, "ContentLengthLimitExceeded", "over 1 MB")
		return
	}
	if err == nil {
		err = json.Unmarshal(body, &records)
	}
	if err != nil {
		ingestionError(w, http.StatusBadRequest, "InvalidContent", err.Error())
		return
	}
	payloads := make([]json.RawMessage, len(records))
	for i, rec := range records {
		if rec["Event"] == nil {
			ingestionError(w, http.StatusBadRequest, "InvalidContent", fmt.Sprintf("record %d has no Event", i))
			return
		}
		payloads[i] = rec["Event"]
	}
	f.mu.Lock()
	f.records = append(f.records, records...)
	f.mu.Unlock()
	f.Accept(payloads...)
	w.WriteHeader(http.StatusNoContent)
}

// Records returns the accepted records, column by column, in arrival order.
func (f *CloudLogs) Records() []map[string]json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), f.records...)
}

// Uploads counts the ingestion calls, refused ones included.
func (f *CloudLogs) Uploads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.uploads
}

// TokenRequests counts the token requests, refused ones included.
func (f *CloudLogs) TokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokenRequests
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	cloudLogsJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// ingestionError answers as the service does: {"error":{"code","message"}}, with the code
// also in the x-ms-error-code header.
func ingestionError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("x-ms-error-code", code)
	cloudLogsJSON(w, status, map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func cloudLogsJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func cloudLogsRandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
