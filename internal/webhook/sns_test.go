package webhook_test

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// snsSigner is a local stand-in for SNS: its signing certificate served over HTTPS.
type snsSigner struct {
	key     *rsa.PrivateKey
	srv     *httptest.Server
	fetches atomic.Int32
}

func newSNSSigner(t *testing.T) *snsSigner {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sns.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s := &snsSigner{key: key}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		if r.URL.Path == "/big.pem" {
			w.Write(make([]byte, 70<<10))
			return
		}
		w.Write(certPEM)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *snsSigner) certs() *webhook.SNSCerts {
	u, _ := url.Parse(s.srv.URL)
	return webhook.NewSNSCerts(u.Host, s.srv.Client())
}

// message signs an SNS message of typ the way SNS does (version "1": SHA1, "2": SHA256).
func (s *snsSigner) message(t *testing.T, typ, version string) map[string]string {
	t.Helper()
	m := map[string]string{"Type": typ, "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
		"TopicArn": "arn:aws:sns:us-west-2:123456789012:MyTopic", "Message": "Hello from SNS",
		"Timestamp": "2012-05-02T00:54:06.655Z", "SignatureVersion": version, "SigningCertURL": s.srv.URL + "/SimpleNotificationService.pem"}
	var fields []string
	if typ == "Notification" {
		m["Subject"] = "My First Message"
		fields = []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	} else {
		m["Token"] = "2336412f37fb687f5d51e6e241d09c805a5a57b30d712f794cc5f6a988666d92768dd60a747ba6f3beb71854e285d6ad02428b09ceece29417f1f02d609c582afbacc99c583a916b9981dd2728f4ae6fdb82efd087cc3b7849e05798d2d2785c03b0879594eeac82c01f235d0e717736"
		m["SubscribeURL"] = "https://sns.us-west-2.amazonaws.com/?Action=ConfirmSubscription&Token=2336412f37"
		fields = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var text string
	for _, f := range fields {
		text += f + "\n" + m[f] + "\n"
	}
	var sig []byte
	var err error
	if version == "1" {
		sum := sha1.Sum([]byte(text))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA1, sum[:])
	} else {
		sum := sha256.Sum256([]byte(text))
		sig, err = rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	}
	if err != nil {
		t.Fatal(err)
	}
	m["Signature"] = b64(sig)
	return m
}

func snsRequest(m map[string]string) *webhook.Request {
	b, _ := json.Marshal(m)
	return &webhook.Request{Method: "POST", URL: hookURL, Header: hdr("x-amz-sns-message-type", m["Type"]), Body: b, Now: time.Now()}
}

// TestSNS: notifications and subscription confirmations signed with SHA1 and SHA256 pass,
// the certificate fetched once; a changed message, a certificate from another host, a
// plain-HTTP certificate URL or an oversized certificate are refused.
func TestSNS(t *testing.T) {
	s := newSNSSigner(t)
	v, err := webhook.New("SNS", "", webhook.Options{SNS: s.certs()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, typ := range []string{"Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation"} {
		for _, version := range []string{"1", "2"} {
			if err := v.Verify(ctx, snsRequest(s.message(t, typ, version))); err != nil {
				t.Fatalf("%s, SignatureVersion %s: %v", typ, version, err)
			}
		}
	}
	if n := s.fetches.Load(); n != 1 {
		t.Fatalf("the certificate was fetched %d times, want once", n)
	}
	for name, change := range map[string]func(m map[string]string){
		"a changed message":         func(m map[string]string) { m["Message"] += "!" },
		"another type":              func(m map[string]string) { m["Type"] = "SubscriptionConfirmation" },
		"an unknown version":        func(m map[string]string) { m["SignatureVersion"] = "3" },
		"a certificate elsewhere":   func(m map[string]string) { m["SigningCertURL"] = "https://evil.example.test/cert.pem" },
		"a plain-HTTP certificate":  func(m map[string]string) { m["SigningCertURL"] = "http" + s.srv.URL[len("https"):] + "/x.pem" },
		"an oversized certificate":  func(m map[string]string) { m["SigningCertURL"] = s.srv.URL + "/big.pem" },
		"a SNS-looking host suffix": func(m map[string]string) { m["SigningCertURL"] = "https://sns.us-east-1.amazonaws.com.evil.test/c.pem" },
	} {
		m := s.message(t, "Notification", "2")
		change(m)
		if err := v.Verify(ctx, snsRequest(m)); err == nil {
			t.Fatalf("%s passed", name)
		}
	}
	if err := v.Verify(ctx, &webhook.Request{Body: []byte(`{"Type":"Notification"}`), Now: time.Now()}); !errors.Is(err, webhook.ErrMissing) {
		t.Fatalf("an unsigned message: %v", err)
	}
	// By default only SNS's own hosts serve certificates.
	def, _ := webhook.New("sns", "", webhook.Options{})
	if err := def.Verify(ctx, snsRequest(s.message(t, "Notification", "1"))); !errors.Is(err, webhook.ErrInvalid) {
		t.Fatalf("a certificate of a local host with the default hosts: %v", err)
	}
}

// TestSNSConcurrent: messages arriving together share one certificate fetch.
func TestSNSConcurrent(t *testing.T) {
	s := newSNSSigner(t)
	v, _ := webhook.New("sns", "", webhook.Options{SNS: s.certs()})
	reqs := make([]*webhook.Request, 16)
	for i := range reqs {
		reqs[i] = snsRequest(s.message(t, "Notification", "2"))
	}
	errs := make(chan error, len(reqs))
	for _, r := range reqs {
		go func() { errs <- v.Verify(t.Context(), r) }()
	}
	for range reqs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := s.fetches.Load(); n != 1 {
		t.Fatalf("the certificate was fetched %d times, want once", n)
	}
}
