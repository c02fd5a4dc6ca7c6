package sealing

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k1, k2 := GenerateKey(), GenerateKey()
	ring, err := NewKeyring(k1)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(`{"key":"-----BEGIN PRIVATE KEY-----"}`)
	v := ring.Seal("tls_certificate", "cert_1", plain)
	if !Sealed(v) || !ring.Current(v) || bytes.Contains(v, []byte("PRIVATE")) {
		t.Fatalf("sealed value %q", v)
	}
	if again := ring.Seal("tls_certificate", "cert_1", plain); bytes.Equal(again, v) {
		t.Fatal("two seals of one value are equal: the nonce is not random")
	}
	if got, err := ring.Open("tls_certificate", "cert_1", v); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	var ke *KeyError
	for _, c := range []struct{ kind, id string }{{"tls_certificate", "cert_2"}, {"ssh_certificate_authority", "cert_1"}} {
		if _, err := ring.Open(c.kind, c.id, v); !errors.As(err, &ke) || ke.Unknown {
			t.Fatalf("Open as %s %s: %v, want an authentication KeyError", c.kind, c.id, err)
		}
	}
	damaged := bytes.Clone(v)
	damaged[len(damaged)-1] ^= 1
	if _, err := ring.Open("tls_certificate", "cert_1", damaged); !errors.As(err, &ke) {
		t.Fatalf("Open of a damaged value: %v", err)
	}
	other, _ := NewKeyring(k2)
	if _, err := other.Open("tls_certificate", "cert_1", v); !errors.As(err, &ke) || !ke.Unknown || ke.KeyID != ring.KeyID() {
		t.Fatalf("Open with another key: %v", err)
	}
	rotated, _ := NewKeyring(k2, k1)
	if got, err := rotated.Open("tls_certificate", "cert_1", v); err != nil || !bytes.Equal(got, plain) || rotated.Current(v) {
		t.Fatalf("Open after rotation = %q, %v (current %v)", got, err, rotated.Current(v))
	}
	// Plaintext from before sealing, and empty values, come back as they are.
	for _, p := range [][]byte{plain, nil, {}} {
		if got, err := rotated.Open("k", "id", p); err != nil || !bytes.Equal(got, p) {
			t.Fatalf("Open(%q) = %q, %v", p, got, err)
		}
	}
	if got := ring.Seal("k", "id", nil); len(got) != 0 {
		t.Fatalf("Seal(nil) = %q", got)
	}
	var none *Keyring
	if _, err := none.Open("k", "id", v); !errors.Is(err, ErrNoKeyring) {
		t.Fatalf("nil keyring: %v", err)
	}
	if got, err := none.Open("k", "id", plain); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("nil keyring on plaintext: %q, %v", got, err)
	}
}

func TestParseKey(t *testing.T) {
	k := GenerateKey()
	for _, s := range []string{EncodeKey(k), " " + EncodeKey(k) + "\n", strings.TrimRight(EncodeKey(k), "=")} {
		if got, err := ParseKey(s); err != nil || !bytes.Equal(got, k) {
			t.Fatalf("ParseKey(%q) = %x, %v", s, got, err)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"not base64!", "not base64"},
		{EncodeKey(k[:16]), "16 bytes"},
		{"", "0 bytes"},
	} {
		_, err := ParseKey(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.in != "" && strings.Contains(err.Error(), c.in)) {
			t.Fatalf("ParseKey(%q) = %v, want an error saying %q without the input", c.in, err, c.want)
		}
	}
	if _, err := NewKeyring(k[:31]); err == nil {
		t.Fatal("a 31-byte key was accepted")
	}
}

// TestDerivedSecrets: replicas with the same keys, previous ones given in any order, derive
// the same key material, the current key's first; another purpose derives other material.
func TestDerivedSecrets(t *testing.T) {
	k1, k2, k3 := GenerateKey(), GenerateKey(), GenerateKey()
	derive := func(purpose string, current []byte, previous ...[]byte) [][]byte {
		ring, err := NewKeyring(current, previous...)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ring.Derive(purpose)
		if err != nil {
			t.Fatal(err)
		}
		return d.Secrets()
	}
	a, b := derive("link", k1, k2, k3), derive("link", k1, k3, k2)
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("%d and %d secrets, want 3", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("secret %d differs between replicas", i)
		}
	}
	if only := derive("link", k1); !bytes.Equal(only[0], a[0]) {
		t.Fatal("the current key's secret depends on the previous keys")
	}
	if other := derive("cookies", k1); bytes.Equal(other[0], a[0]) {
		t.Fatal("two purposes derive the same secret")
	}
	for _, s := range a {
		if bytes.Equal(s, k1) || bytes.Equal(s, k2) || bytes.Equal(s, k3) {
			t.Fatal("a derived secret is a secret key")
		}
	}
}
