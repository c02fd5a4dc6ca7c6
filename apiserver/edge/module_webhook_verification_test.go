package edge_test

import (
	"bytes"
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// echoApp is an app that answers with the exact body it received; hits counts requests.
func echoApp(t *testing.T, hits *atomic.Int32) string {
	t.Helper()
	l := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// webhookRoute puts host behind a route with a webhook_verification module (provider and
// secret, none for "") to an echo app through a real agent.
func (e *env) webhookRoute(host, provider, secret string, hits *atomic.Int32) {
	e.t.Helper()
	e.labelled("http", map[string]string{"app": host}, echoApp(e.t, hits))
	module := map[string]any{"provider": provider}
	if secret != "" {
		module["secret"] = secret
	}
	e.edgeWith(host, nil, e.create("/backends/tunnel_group", map[string]any{"labels": map[string]string{"app": host}}),
		map[string]any{"webhook_verification": module})
}

// post sends body to url through the edge with headers.
func (e *env) post(url string, body []byte, hdr ...string) (int, []byte, http.Header) {
	e.t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.client().Do(req)
	if err != nil {
		e.t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

func mac256(key string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, []byte(key))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// TestWebhookVerification: through the edge to a real agent's app, a request signed the
// way GitHub, Stripe, Twilio and Slack sign reaches the app with its body byte for byte;
// one unsigned, signed with another secret or (Stripe, Slack) signed too long ago is
// refused with 403 ERR_8030 and never reaches the app.
func TestWebhookVerification(t *testing.T) {
	e := newEnv(t)
	var hits atomic.Int32
	const secret = "whsec-test-1"
	for host, provider := range map[string]string{"gh.example.test": "github", "stripe.example.test": "STRIPE",
		"twilio.example.test": "twilio", "slack.example.test": "slack"} {
		e.webhookRoute(host, provider, secret, &hits)
	}
	payload := make([]byte, 70000) // every byte value, over a few reads
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	now := time.Now().Unix()
	stripeSig := func(key string, ts int64) string {
		t := strconv.FormatInt(ts, 10)
		return "t=" + t + ",v1=" + hex.EncodeToString(mac256(key, []byte(t+"."), payload))
	}
	slackTS := func(ts int64) string { return strconv.FormatInt(ts, 10) }
	slackSig := func(key string, ts int64) string {
		return "v0=" + hex.EncodeToString(mac256(key, []byte("v0:"+slackTS(ts)+":"), payload))
	}
	form := []byte("Body=hello+world&From=%2B14158675309&To=%2B18005551212")
	twilioURL := "https://twilio.example.test/sms?x=1"
	twilio := func(key string) string {
		m := hmac.New(sha1.New, []byte(key))
		m.Write([]byte(twilioURL + "Bodyhello worldFrom+14158675309To+18005551212"))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	type call struct {
		name, url string
		body      []byte
		hdr       []string
	}
	passes := []call{
		{"github", "https://gh.example.test/hook", payload, []string{"X-Hub-Signature-256", "sha256=" + hex.EncodeToString(mac256(secret, payload))}},
		{"stripe", "https://stripe.example.test/hook", payload, []string{"Stripe-Signature", stripeSig(secret, now)}},
		{"twilio", twilioURL, form, []string{"Content-Type", "application/x-www-form-urlencoded", "X-Twilio-Signature", twilio(secret)}},
		{"slack", "https://slack.example.test/", payload, []string{"X-Slack-Request-Timestamp", slackTS(now), "X-Slack-Signature", slackSig(secret, now)}},
	}
	for _, c := range passes {
		status, got, _ := e.post(c.url, c.body, c.hdr...)
		if status != 200 || !bytes.Equal(got, c.body) {
			t.Fatalf("%s: %d, the app received %d bytes (identical: %v), sent %d", c.name, status, len(got), bytes.Equal(got, c.body), len(c.body))
		}
	}
	if n := hits.Load(); n != int32(len(passes)) {
		t.Fatalf("the apps got %d requests, want %d", n, len(passes))
	}
	stale := now - 600
	refused := []call{
		{"github unsigned", "https://gh.example.test/hook", payload, nil},
		{"github another secret", "https://gh.example.test/hook", payload, []string{"X-Hub-Signature-256", "sha256=" + hex.EncodeToString(mac256("other", payload))}},
		{"github a changed body", "https://gh.example.test/hook", append([]byte("x"), payload...), []string{"X-Hub-Signature-256", "sha256=" + hex.EncodeToString(mac256(secret, payload))}},
		{"stripe stale", "https://stripe.example.test/hook", payload, []string{"Stripe-Signature", stripeSig(secret, stale)}},
		{"stripe another secret", "https://stripe.example.test/hook", payload, []string{"Stripe-Signature", stripeSig("other", now)}},
		{"twilio another URL", "https://twilio.example.test/sms?x=2", form, []string{"Content-Type", "application/x-www-form-urlencoded", "X-Twilio-Signature", twilio(secret)}},
		{"slack stale", "https://slack.example.test/", payload, []string{"X-Slack-Request-Timestamp", slackTS(stale), "X-Slack-Signature", slackSig(secret, stale)}},
	}
	for _, c := range refused {
		status, got, h := e.post(c.url, c.body, c.hdr...)
		if status != http.StatusForbidden || h.Get("Warren-Error-Code") != "ERR_8030" {
			t.Fatalf("%s: %d %q %s", c.name, status, h.Get("Warren-Error-Code"), got)
		}
	}
	if n := hits.Load(); n != int32(len(passes)) {
		t.Fatalf("a refused request reached the app: %d requests, want %d", n, len(passes))
	}
}

// TestWebhookVerificationLimits: a body over the edge's MaxRequestBody is refused (413
// ERR_8031) before it is checked; a provider whose scheme is not known (orbit) refuses all
// its traffic (501 ERR_8032 naming it).
func TestWebhookVerificationLimits(t *testing.T) {
	e := newEnv(t, func(o *edge.Options) { o.MaxRequestBody = 1000 })
	var hits atomic.Int32
	e.webhookRoute("big.example.test", "github", "s", &hits)
	e.webhookRoute("orbit.example.test", "orbit", "s", &hits)
	big := make([]byte, 2000)
	status, _, h := e.post("https://big.example.test/", big, "X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac256("s", big)))
	if status != http.StatusRequestEntityTooLarge || h.Get("Warren-Error-Code") != "ERR_8031" {
		t.Fatalf("an oversized body: %d %q", status, h.Get("Warren-Error-Code"))
	}
	status, body, h := e.post("https://orbit.example.test/", []byte("{}"))
	if status != http.StatusNotImplemented || h.Get("Warren-Error-Code") != "ERR_8032" || !bytes.Contains(body, []byte("orbit")) {
		t.Fatalf("orbit: %d %q %s", status, h.Get("Warren-Error-Code"), body)
	}
	if hits.Load() != 0 {
		t.Fatal("a refused request reached the app")
	}
}

// TestWebhookVerificationSNS: an SNS notification and a subscription confirmation signed
// with a certificate the edge fetches from the allowed host (a local HTTPS server here)
// pass byte for byte; a changed message, or a certificate from another host, is refused.
func TestWebhookVerificationSNS(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	var fetches atomic.Int32
	certs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
	}))
	t.Cleanup(certs.Close)
	certHost, _ := url.Parse(certs.URL)
	e := newEnv(t, func(o *edge.Options) { o.SNSCerts = webhook.NewSNSCerts(certHost.Host, certs.Client()) })
	var hits atomic.Int32
	e.webhookRoute("sns.example.test", "sns", "", &hits)

	message := func(typ, version, certURL string) []byte {
		m := map[string]string{"Type": typ, "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b", "TopicArn": "arn:aws:sns:us-east-1:123456789012:hooks",
			"Message": `{"order":42}`, "Timestamp": "2026-11-26T12:00:00.000Z", "SignatureVersion": version, "SigningCertURL": certURL}
		fields := []string{"Message", "MessageId", "Timestamp", "TopicArn", "Type"}
		if typ == "SubscriptionConfirmation" {
			m["Token"], m["SubscribeURL"] = "2336412f37fb", "https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription"
			fields = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
		}
		var text []byte
		for _, f := range fields {
			text = append(text, f+"\n"+m[f]+"\n"...)
		}
		var sig []byte
		if version == "1" {
			sum := sha1.Sum(text)
			sig, _ = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA1, sum[:])
		} else {
			sum := sha256.Sum256(text)
			sig, _ = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
		}
		m["Signature"] = base64.StdEncoding.EncodeToString(sig)
		b, _ := json.MarshalIndent(m, "", "  ")
		return b
	}
	certURL := certs.URL + "/SimpleNotificationService-abc.pem"
	for _, b := range [][]byte{message("Notification", "2", certURL), message("SubscriptionConfirmation", "1", certURL)} {
		status, got, _ := e.post("https://sns.example.test/", b, "Content-Type", "text/plain; charset=UTF-8")
		if status != 200 || !bytes.Equal(got, b) {
			t.Fatalf("a signed SNS message: %d %s", status, got)
		}
	}
	tampered := bytes.Replace(message("Notification", "2", certURL), []byte("42"), []byte("43"), 1)
	elsewhere := message("Notification", "2", "https://certs.example.test/SimpleNotificationService.pem")
	for name, b := range map[string][]byte{"a changed message": tampered, "a certificate elsewhere": elsewhere} {
		if status, got, h := e.post("https://sns.example.test/", b); status != http.StatusForbidden || h.Get("Warren-Error-Code") != "ERR_8030" {
			t.Fatalf("%s: %d %s", name, status, got)
		}
	}
	if hits.Load() != 2 || fetches.Load() != 1 {
		t.Fatalf("the app got %d requests (want 2), the certificate was fetched %d times (want 1)", hits.Load(), fetches.Load())
	}
}
