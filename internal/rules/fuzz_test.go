package rules

import (
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	json "github.com/go-json-experiment/json"
	"golang.org/x/crypto/ssh"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// Fuzz targets of the rules that see raw client input. Their seeds run in every `go test`;
// `make fuzz` explores beyond them. Every refusal must be a *Violation (the API turns it
// into a 400 with its code); anything else, or a panic, would be a 5xx.

// violationOf fails unless err is a *Violation with a code.
func violationOf(t *testing.T, err error) *Violation {
	t.Helper()
	var v *Violation
	if !errors.As(err, &v) || !strings.HasPrefix(v.Code, "ERR_") {
		t.Fatalf("refusal %v (%T) is not a Violation with a code", err, err)
	}
	return v
}

func FuzzACLRule(f *testing.F) {
	for _, s := range []string{
		"*", "bind:example.com", "bind:*.example.com", "bind:example.com:443", "bind:[2001:db8::1]:22",
		"bind:10.0.0.1:8080", "bind:env=prod", "bind:*=*", "bind:", "bind:a=", "bind:=b", "bind:x.com:0",
		"bind:x.com:65536", "bind:-a.com", "bind:a..com", "bind:" + strings.Repeat("a", 64) + ".com",
		"connect:x", "bind:x.com\n", "bind:münchen.de", "bind:*.*.com", "bind:[::1]", "**", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rule string) {
		err := ACLRule(rule)
		if err != nil {
			if v := violationOf(t, err); v.Field != "acl" {
				t.Fatalf("ACLRule(%q): field %q, want acl", rule, v.Field)
			}
			return
		}
		// An accepted rule round-trips through the wire and is accepted again, alone or in a list.
		if rule != "*" && !strings.HasPrefix(rule, "bind:") {
			t.Fatalf("ACLRule(%q) accepted a rule that is neither '*' nor 'bind:…'", rule)
		}
		data, err := json.Marshal(api.Credential{ACL: []string{rule}})
		if err != nil {
			t.Fatalf("marshal %q: %v", rule, err)
		}
		var back api.Credential
		if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back.ACL, []string{rule}) {
			t.Fatalf("ACL rule %q does not round-trip: %s → %q (%v)", rule, data, back.ACL, err)
		}
		if err := ACL(back.ACL); err != nil {
			t.Fatalf("ACL rule %q accepted, then refused after a round trip: %v", rule, err)
		}
	})
}

func FuzzReservedDomain(f *testing.F) {
	for _, s := range []string{
		"example.com", "App.Example.COM.", " app.example.com ", "*.example.com", "*.com", "*.co.uk",
		"xn--mnchen-3ya.de", "xn--zz.de", "ab--c.com", "a_b.com", "a..b", ".a.com", "a.com.", "a.com..",
		"a-.com", "-a.com", "a.*.com", "a*.com", "localhost", "", ".", " . ", "a. .", "a.b\x00",
		"app.warren.example", "*.warren.example", strings.Repeat("a", 64) + ".warren.example",
		strings.Repeat("a.", 127) + "com", "ÄPP.example.com", "İ.example.com",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, domain string) {
		name := NormalizeDomain(domain)
		for _, base := range []string{"", "warren.example"} {
			err := ReservedDomain(name, base)
			if err != nil {
				if v := violationOf(t, err); v.Field != "domain" {
					t.Fatalf("ReservedDomain(%q): field %q, want domain", name, v.Field)
				}
				continue
			}
			// What the API accepts and stores is already normal: normalising it again (the
			// provider does, to compare) changes nothing. (Not every input is a fixed point:
			// "a.." loses one dot at a time, but "a." is refused.)
			if again := NormalizeDomain(name); again != name {
				t.Fatalf("accepted domain %q normalises again to %q", name, again)
			}
			if len(name) > MaxDomainLength || strings.ContainsFunc(name, func(r rune) bool { return !domainChar(r) }) {
				t.Fatalf("accepted domain %q is too long or has a character outside a-z0-9.*-", name)
			}
			if base != "" && ServiceSubdomain(name, base) && len(strings.TrimSuffix(name, "."+base)) > MaxServiceNameLength {
				t.Fatalf("accepted %q: its name under %s is too long", name, base)
			}
		}
	})
}

func FuzzSSHPublicKey(f *testing.F) {
	const ed = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGpXhjHcQ4TkUyP0xqD2uJj1Z3DBkL4lCXHyl1fJ9uZ8"
	for _, s := range []string{
		ed, ed + " me@host", ed + " me@host\n", ed + " me\x1b[2J", "  " + ed, ed[:40], "ssh-rsa AAAA", "ssh-ed25519",
		`command="rm -rf /" ` + ed, ed + "\n" + ed, "", " ", "-----BEGIN PUBLIC KEY-----",
		"ssh-ed25519 " + strings.Repeat("A", 4000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, publicKey string) {
		fp, err := SSHPublicKey(publicKey)
		if err != nil {
			violationOf(t, err)
			return
		}
		// The fingerprint is the key's, stable through the authorized_keys form.
		key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(publicKey))
		if err != nil {
			t.Fatalf("SSHPublicKey accepted %q that ssh cannot parse: %v", publicKey, err)
		}
		again, err := SSHPublicKey(string(ssh.MarshalAuthorizedKey(key)))
		if err != nil || again != fp || !strings.HasPrefix(fp, "SHA256:") {
			t.Fatalf("fingerprint %q of %q is not stable: %q, %v", fp, publicKey, again, err)
		}
	})
}

// fuzzPEMs returns a CA and a leaf certificate signed by it, and the leaf's key, in PEM.
// Ed25519 signatures are deterministic, so the seeds are the same in every run.
func fuzzPEMs(f testing.TB) (caPEM, leafPEM, leafKeyPEM string) {
	f.Helper()
	caKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	leafKey := ed25519.NewKeyFromSeed([]byte(strings.Repeat("l", ed25519.SeedSize)))
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: at,
		NotAfter: at.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(nil, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		f.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "app.example.com"},
		DNSNames: []string{"app.example.com"}, NotBefore: at, NotAfter: at.AddDate(1, 0, 0)}
	leafDER, err := x509.CreateCertificate(nil, leafTmpl, ca, leafKey.Public(), caKey)
	if err != nil {
		f.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		f.Fatal(err)
	}
	return pemOf("CERTIFICATE", caDER, nil), pemOf("CERTIFICATE", leafDER, nil), pemOf("PRIVATE KEY", keyDER, nil)
}

func FuzzTLSCertificate(f *testing.F) {
	ca, leaf, key := fuzzPEMs(f)
	for _, s := range [][2]string{
		{leaf, key}, {leaf + ca, key}, {ca + leaf, key}, {"subject=CN = app\n" + leaf, key}, {key, leaf},
		{leaf, "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + key},
		{leaf, strings.Replace(key, "PRIVATE KEY-----\n", "PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\n\n", 1)},
		{leaf, strings.ReplaceAll(key, "PRIVATE KEY", "RSA PRIVATE KEY")},
		{leaf, strings.ReplaceAll(key, "PRIVATE KEY", "EC PRIVATE KEY")},
		{leaf[:len(leaf)/2], key}, {leaf, key[:len(key)-20]}, {leaf, key + key}, {"", ""}, {leaf, ""},
		{"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n", key},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, certificatePEM, privateKeyPEM string) {
		up, err := TLSCertificate(certificatePEM, privateKeyPEM)
		if err != nil {
			violationOf(t, err)
			return
		}
		if len(up.Chain) == 0 || up.Key == nil {
			t.Fatalf("accepted an upload without a chain or key: %+v", up)
		}
		if pub, ok := up.Chain[0].PublicKey.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(up.Key.Public()) {
			t.Fatal("accepted a key that is not the leaf's")
		}
	})
}

func FuzzCertificateAuthority(f *testing.F) {
	ca, leaf, key := fuzzPEMs(f)
	for _, s := range []string{
		ca, leaf, ca + ca, key, ca[:len(ca)-10], "junk\n" + ca + "junk\n", "", " ",
		strings.Replace(ca, "CERTIFICATE-----\n", "CERTIFICATE-----\nA: b\n\n", 1),
		strings.ReplaceAll(ca, "CERTIFICATE", "X509 CRL"),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, caPEM string) {
		cert, err := CertificateAuthority(caPEM)
		if err != nil {
			violationOf(t, err)
			return
		}
		if !cert.IsCA || !cert.BasicConstraintsValid {
			t.Fatalf("accepted a certificate without the CA constraint: %q", caPEM)
		}
	})
}

func FuzzEventTarget(f *testing.F) {
	for _, s := range []string{
		`{"data_stream":{"auth":{"role":{"role_arn":"arn:aws:iam::1:role/r"}},"stream_arn":"arn:aws:kinesis:us-east-1:1:stream/s"}}`,
		`{"delivery_stream":{"auth":{"creds":{"access_key_id":"AKIA","secret_access_key":"s"}},"delivery_stream_arn":"arn:aws:firehose:eu-west-1:1:deliverystream/d"}}`,
		`{"log_group":{"auth":{"role":{"role_arn":"arn:aws:iam::1:role/r"}},"log_group_arn":"arn:aws:logs:eu-west-1:1:log-group:g:*"}}`,
		`{"observability":{"api_key":"k","site":"datadoghq.com","service":"warren","tags":"env:prod"}}`,
		`{"cloud_logs_ingestion":{"tenant_id":"72f988bf-86f1-41af-91ab-2d7cd011db47","client_id":"0b5a3b8e-3c5e-4f6e-9c1d-2a3b4c5d6e7f","client_secret":"s","logs_ingestion_uri":"https://dce.ingest.monitor.azure.com","data_collection_rule_id":"dcr-00000000000000000000000000000000","data_collection_stream_name":"Custom-Events"}}`,
		`{}`, `{"data_stream":{}}`, `{"data_stream":{"auth":{}},"log_group":{}}`,
		`{"data_stream":{"auth":{"role":{"role_arn":"arn:aws:iam::1:user/u"}},"stream_arn":"arn:"}}`,
		`{"log_group":{"auth":{"role":{"role_arn":"arn:aws:iam::1:role/r"},"creds":{}},"log_group_arn":"arn:aws:logs:x:1:log-group/g"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var target api.EventTarget
		if json.Unmarshal(data, &target, json.RejectUnknownMembers(true)) != nil {
			return // the server refuses it before the rules see it (ERR_213/214/215)
		}
		if err := EventTarget(&target); err != nil {
			violationOf(t, err)
			return
		}
		// An accepted target is accepted again as the server stores and the client sends it.
		out, err := json.Marshal(target)
		if err != nil {
			t.Fatal(err)
		}
		var back api.EventTarget
		if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(back, target) {
			t.Fatalf("target %s does not round-trip: %s (%v)", data, out, err)
		}
		if err := EventTarget(&back); err != nil {
			t.Fatalf("target %s accepted, then refused after a round trip: %v", data, err)
		}
	})
}

func FuzzTrafficPolicy(f *testing.F) {
	owners := []string{PolicyOwnerTCPEdge, PolicyOwnerTLSEdge, PolicyOwnerHTTPSRoute}
	for _, s := range []struct {
		owner uint8
		value string
	}{
		{0, `{"on_tcp_connect":[{"expressions":["conn.client_ip == '1.2.3.4'"],"actions":[{"type":"deny"}]}]}`},
		{2, "on_http_request:\n  - name: r\n    expressions: [\"req.url.path == '/'\"]\n    actions: [{type: deny}]\n"},
		{2, `{"on_http_request":[{"expressions":["base64.decode(getReqHeader('x-a')[0]) == b'x'"],"actions":[{"type":"deny"}]}]}`},
		{2, `{"on_http_response":[{"expressions":["res.status_code == 200"],"actions":[{"type":"log"}]}]}`},
		{1, `{}`}, {0, "on_tcp_connect:\n"}, {0, "# nothing"}, {0, "on_tcp_connect: ["}, {0, "a: &x [*x]"},
		{0, "on_tcp_connect: []\n---\non_tcp_connect: []\n"}, {0, `"deny"`}, {2, `{"inbound":[]}`},
		{0, `{"on_tcp_connect":[{"expressions":["1 + 1"],"actions":[{"type":"deny"}]}]}`},
		{0, `{"on_tcp_connect":[{"expressions":[true],"actions":[{"type":"deny"}]}]}`},
		{0, `{"on_tcp_connect":[{"actions":[{"config":{}}]}]}`}, {0, ""},
	} {
		f.Add(s.owner, s.value)
	}
	f.Fuzz(func(t *testing.T, owner uint8, value string) {
		o := owners[int(owner)%len(owners)]
		m, err := TrafficPolicy(&api.TrafficPolicyModuleRequest{Value: &value}, o)
		if err != nil {
			if v := violationOf(t, err); v.Field != "value" {
				t.Fatalf("TrafficPolicy(%q): field %q, want value", value, v.Field)
			}
			return
		}
		if m.Value != value || !m.Enabled {
			t.Fatalf("accepted policy stored as %+v, want the value verbatim and enabled", m)
		}
	})
}
