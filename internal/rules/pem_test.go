package rules

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func pemOf(typ string, der []byte, headers map[string]string) string {
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der, Headers: headers}))
}

// issue makes a certificate for key, signed by parent (self-signed when parent is nil), and
// returns it with its PEM.
func issue(t *testing.T, cn string, isCA bool, key crypto.Signer, parent *x509.Certificate, parentKey crypto.Signer) (*x509.Certificate, string) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  isCA,
		BasicConstraintsValid: isCA,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, pemOf("CERTIFICATE", der, nil)
}

func pkcs8(t *testing.T, key crypto.Signer) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pemOf("PRIVATE KEY", der, nil)
}

func TestTLSCertificate(t *testing.T) {
	rootKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	root, rootPEM := issue(t, "root", true, rootKey, nil, nil)
	interKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	inter, interPEM := issue(t, "intermediate", true, interKey, root, rootKey)
	ecLeafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ecLeaf := issue(t, "ec", false, ecLeafKey, inter, interKey)
	rsaLeafKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, rsaLeaf := issue(t, "rsa", false, rsaLeafKey, inter, interKey)
	_, edLeafKey, _ := ed25519.GenerateKey(rand.Reader)
	_, edLeaf := issue(t, "ed", false, edLeafKey, inter, interKey)

	sec1DER, _ := x509.MarshalECPrivateKey(ecLeafKey)
	sec1 := pemOf("EC PRIVATE KEY", sec1DER, nil)
	pkcs1 := pemOf("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaLeafKey), nil)
	chain := ecLeaf + interPEM + rootPEM

	for _, tt := range []struct {
		name      string
		cert, key string
		want      string
		chainLen  int
	}{
		{"full chain, SEC 1 key", chain, sec1, "", 3},
		{"PKCS #8 ECDSA key", ecLeaf, pkcs8(t, ecLeafKey), "", 1},
		{"PKCS #1 RSA key", rsaLeaf + interPEM, pkcs1, "", 2},
		{"PKCS #8 RSA key", rsaLeaf, pkcs8(t, rsaLeafKey), "", 1},
		{"PKCS #8 Ed25519 key", edLeaf + interPEM + rootPEM, pkcs8(t, edLeafKey), "", 3},
		{"EC PARAMETERS before the key", ecLeaf, pemOf("EC PARAMETERS", []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}, nil) + sec1, "", 1},
		{"text around the blocks", "leaf:\n" + ecLeaf + "issuer:\n" + interPEM + "\n", "key:\n" + sec1, "", 2},
		{"no certificate", "", sec1, "ERR_1922", 0},
		{"blank certificate", "\n  \n", sec1, "ERR_1922", 0},
		{"certificate not PEM", "MIIB", sec1, "ERR_1900", 0},
		{"truncated certificate", ecLeaf[:len(ecLeaf)/2], sec1, "ERR_1900", 0},
		{"damaged block between good ones", ecLeaf + "-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n" + interPEM, sec1, "ERR_1900", 0},
		{"certificate DER garbage", pemOf("CERTIFICATE", []byte{1, 2, 3}, nil), sec1, "ERR_1900", 0},
		{"certificate headers", pemOf("CERTIFICATE", inter.Raw, map[string]string{"X": "y"}), sec1, "ERR_1910", 0},
		{"certificate block type", pemOf("X509 CRL", inter.Raw, nil), sec1, "ERR_1911", 0},
		{"key in the certificate field", sec1, sec1, "ERR_1925", 0},
		{"key appended to the chain", ecLeaf + sec1, sec1, "ERR_1925", 0},
		{"no key", ecLeaf, "", "ERR_1901", 0},
		{"certificate in the key field", ecLeaf, ecLeaf, "ERR_1924", 0},
		{"legacy encrypted key", ecLeaf, pemOf("EC PRIVATE KEY", sec1DER, map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "DES-EDE3-CBC,0011223344556677"}), "ERR_1902", 0},
		{"PKCS #8 encrypted key", ecLeaf, pemOf("ENCRYPTED PRIVATE KEY", []byte{1}, nil), "ERR_1902", 0},
		{"key headers", ecLeaf, pemOf("EC PRIVATE KEY", sec1DER, map[string]string{"X": "y"}), "ERR_1910", 0},
		{"key not PEM", ecLeaf, "secret", "ERR_1903", 0},
		{"truncated key", ecLeaf, sec1[:len(sec1)/2], "ERR_1903", 0},
		{"key block type", ecLeaf, pemOf("PUBLIC KEY", sec1DER, nil), "ERR_1903", 0},
		{"key DER garbage", ecLeaf, pemOf("PRIVATE KEY", []byte{1, 2}, nil), "ERR_1903", 0},
		{"two keys", ecLeaf, sec1 + pkcs1, "ERR_1903", 0},
		{"only EC PARAMETERS", ecLeaf, pemOf("EC PARAMETERS", []byte{6, 8, 42, 134, 72, 206, 61, 3, 1, 7}, nil), "ERR_1903", 0},
		{"key of another certificate", ecLeaf, pkcs1, "ERR_1923", 0},
		{"key of the issuer", ecLeaf + interPEM, pkcs8(t, interKey), "ERR_1923", 0},
		{"issuer first", interPEM + ecLeaf, sec1, "ERR_1923", 0},
		{"chain out of order", ecLeaf + rootPEM + interPEM, sec1, "ERR_1926", 0},
		{"chain missing a link", ecLeaf + rootPEM, sec1, "ERR_1926", 0},
		{"leaf twice", ecLeaf + ecLeaf, sec1, "ERR_1926", 0},
	} {
		got, err := TLSCertificate(tt.cert, tt.key)
		if code(err) != tt.want {
			t.Errorf("%s: TLSCertificate = %v (%s), want %q", tt.name, err, code(err), tt.want)
			continue
		}
		if tt.want == "" && (len(got.Chain) != tt.chainLen || !got.Key.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(got.Chain[0].PublicKey)) {
			t.Errorf("%s: chain of %d, key %T", tt.name, len(got.Chain), got.Key)
		}
		if v := (*Violation)(nil); errors.As(err, &v) && v.Field != "certificate_pem" && v.Field != "private_key_pem" {
			t.Errorf("%s: violation field %q", tt.name, v.Field)
		}
	}
}

func TestCertificateAuthority(t *testing.T) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca, caPEM := issue(t, "ca", true, caKey, nil, nil)
	_, otherCA := issue(t, "other", true, caKey, nil, nil)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, leaf := issue(t, "leaf", false, leafKey, ca, caKey)

	for _, tt := range []struct {
		name, pem, want string
	}{
		{"a CA", caPEM, ""},
		{"text around the block", "# our CA\n" + caPEM + "\n", ""},
		{"missing", "", "ERR_1919"},
		{"blank", " \n", "ERR_1919"},
		{"not PEM", "hello", "ERR_1920"},
		{"truncated", caPEM[:len(caPEM)-20], "ERR_1920"},
		{"DER garbage", pemOf("CERTIFICATE", []byte{1}, nil), "ERR_1920"},
		{"too large", caPEM + strings.Repeat(" ", MaxCAPEMBytes), "ERR_1921"},
		{"headers", pemOf("CERTIFICATE", ca.Raw, map[string]string{"X": "y"}), "ERR_1910"},
		{"a key", pkcs8(t, caKey), "ERR_1911"},
		{"two CAs", caPEM + otherCA, "ERR_1912"},
		{"not a CA", leaf, "ERR_1913"},
	} {
		got, err := CertificateAuthority(tt.pem)
		if code(err) != tt.want {
			t.Errorf("%s: CertificateAuthority = %v (%s), want %q", tt.name, err, code(err), tt.want)
		}
		if tt.want == "" && got.Subject.CommonName != "ca" {
			t.Errorf("%s: got %v", tt.name, got.Subject)
		}
	}
}
