package rules

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
)

func TestEnabledFeatures(t *testing.T) {
	got, err := EnabledFeatures([]string{"Ingress", "BINDINGS", "gateway"})
	if err != nil || !slices.Equal(got, []string{"ingress", "bindings", "gateway"}) {
		t.Fatalf("EnabledFeatures = %v, %v", got, err)
	}
	for _, in := range [][]string{{"egress"}, {"ingress", "Ingress"}, {""}} {
		if got := code(firstErr(EnabledFeatures(in))); got != "ERR_215" {
			t.Errorf("EnabledFeatures(%q) = %q, want ERR_215", in, got)
		}
	}
}

func firstErr[T any](_ T, err error) error { return err }

func TestOperatorRegionAndDeployment(t *testing.T) {
	for in, want := range map[string]string{"global": "", "eu": "", "": "ERR_215", "mars": "ERR_215", "EU": "ERR_215"} {
		if got := code(OperatorRegion(in)); got != want {
			t.Errorf("OperatorRegion(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"": "", "op-1": "", "a\nb": "ERR_215", strings.Repeat("x", 256): "ERR_215"} {
		if got := code(OperatorDeploymentValue("name", in)); got != want {
			t.Errorf("OperatorDeploymentValue(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"ingress.example.com:443": "", "ingress.example.com": "ERR_215", "x:0": "ERR_215"} {
		if got := code(IngressEndpoint(in)); got != want {
			t.Errorf("IngressEndpoint(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOperatorCSR(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "operator"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	good := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}))
	csr, err := OperatorCSR(good)
	if err != nil || csr.Subject.CommonName != "operator" {
		t.Fatalf("OperatorCSR(good) = %v, %v", csr, err)
	}
	noCN, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	tampered := slices.Clone(der)
	tampered[len(tampered)-3] ^= 0xff // inside the signature
	for name, in := range map[string]string{
		"empty":     " ",
		"not PEM":   "hello",
		"cert type": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"garbage":   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: []byte("nope")})),
		"two":       good + good,
		"signature": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: tampered})),
		"no CN":     string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: noCN})),
	} {
		if got := code(firstErr(OperatorCSR(in))); got != "ERR_215" {
			t.Errorf("%s: OperatorCSR = %q, want ERR_215", name, got)
		}
	}
}

func TestEndpointSelectors(t *testing.T) {
	ep := &SelectorEndpoint{ID: "ep_1", Proto: "https", Host: "app.example.com", Port: 443, Metadata: "team=a", Bindings: []string{"orchestrator"}}
	for expr, want := range map[string]bool{
		"true":                      true,
		`endpoint.proto == "https"`: true,
		`endpoint.port == 443 && endpoint.host.endsWith(".example.com")`: true,
		`"orchestrator" in endpoint.bindings`:                            true,
		`endpoint.metadata.contains("team=b")`:                           false,
		`endpoint.proto == "tcp"`:                                        false,
	} {
		s, err := EndpointSelector(0, expr)
		if err != nil {
			t.Fatalf("EndpointSelector(%q): %v", expr, err)
		}
		if got := s.Match(ep); got != want {
			t.Errorf("%q matched %v, want %v", expr, got, want)
		}
	}
	for _, expr := range []string{"", "endpoint.nope == 1", `endpoint.proto`, "1 +", `obj.proto == "x"`, strings.Repeat("x", MaxOperatorSelectorBytes+1)} {
		_, err := EndpointSelector(2, expr)
		if code(err) != "ERR_215" || err.(*Violation).Field != "binding.endpoint_selectors[2]" {
			t.Errorf("EndpointSelector(%.20q) = %v", expr, err)
		}
	}
	if _, err := EndpointSelectors(make([]string, MaxOperatorSelectors+1)); code(err) != "ERR_215" {
		t.Errorf("too many selectors: %v", err)
	}
}
