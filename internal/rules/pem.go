package rules

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"
)

// Description and metadata codes of the certificate families (details.md §5.3). The TLS
// certificate row lists 1914/1915 "also 1916/1917"; we read the second pair as the
// certificate authorities' own, since their row lists none.
var (
	TLSCertificateText       = TextCodes{"ERR_1914", "ERR_1915"}
	CertificateAuthorityText = TextCodes{"ERR_1916", "ERR_1917"}
)

// MaxCAPEMBytes caps ca_pem (ERR_1921): one CA certificate is a few KiB at most.
const MaxCAPEMBytes = 64 << 10

// PEM block types the upload checks recognise.
const (
	pemCertificate  = "CERTIFICATE"
	pemEncryptedKey = "ENCRYPTED PRIVATE KEY"
	pemPKCS8Key     = "PRIVATE KEY"
	pemRSAKey       = "RSA PRIVATE KEY"
	pemECKey        = "EC PRIVATE KEY"
	pemECParameters = "EC PARAMETERS" // written before the key by `openssl ecparam -genkey`
)

// TLSCertificateUpload is a certificate chain and private key that passed the upload checks.
type TLSCertificateUpload struct {
	Chain []*x509.Certificate // leaf first, each certificate signed by the next
	Key   crypto.Signer       // *rsa.PrivateKey, *ecdsa.PrivateKey or ed25519.PrivateKey
}

// TLSCertificate runs the upload checks of details.md §6.6 and §7.7 on certificate_pem (a
// chain, leaf first) and private_key_pem; "" means not given. The certificate is checked
// first, then the key, then that the key belongs to the leaf, then the chain order.
func TLSCertificate(certificatePEM, privateKeyPEM string) (*TLSCertificateUpload, error) {
	chain, err := certificateChain(certificatePEM)
	if err != nil {
		return nil, err
	}
	key, err := privateKey(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	public, ok := chain[0].PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !public.Equal(key.Public()) {
		return nil, violation("ERR_1923", "private_key_pem", "The certificate and the private key do not match: the key is not the key of the first (leaf) certificate.")
	}
	for i := 0; i+1 < len(chain); i++ {
		if err := chain[i].CheckSignatureFrom(chain[i+1]); err != nil {
			return nil, violation("ERR_1926", "certificate_pem", "The certificate chain is out of order: certificate %d (%s) is not signed by certificate %d (%s): %s. Give the leaf first, then each issuer in turn.", i+1, Quote(chain[i].Subject.CommonName), i+2, Quote(chain[i+1].Subject.CommonName), Clip(err.Error()))
		}
	}
	return &TLSCertificateUpload{Chain: chain, Key: key}, nil
}

// certificateChain parses certificate_pem: one or more CERTIFICATE blocks without headers.
func certificateChain(s string) ([]*x509.Certificate, error) {
	const field = "certificate_pem"
	if strings.TrimSpace(s) == "" {
		return nil, violation("ERR_1922", field, "No PEM-encoded certificate was given in certificate_pem.")
	}
	blocks, complete := pemBlocks(s)
	if len(blocks) == 0 || !complete {
		return nil, violation("ERR_1900", field, "The certificate format is unknown: certificate_pem must hold PEM blocks (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----).")
	}
	var chain []*x509.Certificate
	for i, b := range blocks {
		if isPrivateKey(b.Type) {
			return nil, violation("ERR_1925", field, "certificate_pem holds a private key (%s); were the certificate and the key swapped?", b.Type)
		}
		if len(b.Headers) > 0 {
			return nil, violation("ERR_1910", field, "PEM block %d of certificate_pem has headers, which are not allowed.", i+1)
		}
		if b.Type != pemCertificate {
			return nil, violation("ERR_1911", field, "PEM block %d of certificate_pem is of type %s; the type must be CERTIFICATE.", i+1, Quote(b.Type))
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, violation("ERR_1900", field, "Certificate %d of certificate_pem cannot be parsed: %s.", i+1, Clip(err.Error()))
		}
		chain = append(chain, cert)
	}
	return chain, nil
}

// privateKey parses private_key_pem: one unencrypted PKCS #8, PKCS #1 (RSA) or SEC 1 (EC)
// key block without headers, optionally preceded by an EC PARAMETERS block.
func privateKey(s string) (crypto.Signer, error) {
	const field = "private_key_pem"
	if strings.TrimSpace(s) == "" {
		return nil, violation("ERR_1901", field, "No PEM-encoded private key was given in private_key_pem.")
	}
	blocks, complete := pemBlocks(s)
	if len(blocks) == 0 || !complete {
		return nil, violation("ERR_1903", field, "The private key format is unknown: private_key_pem must hold one PEM block (-----BEGIN PRIVATE KEY----- … -----END PRIVATE KEY-----).")
	}
	var keys []*pem.Block
	for i, b := range blocks {
		switch {
		case b.Type == pemCertificate:
			return nil, violation("ERR_1924", field, "private_key_pem holds a certificate; were the certificate and the key swapped?")
		case b.Type == pemEncryptedKey || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED"):
			return nil, violation("ERR_1902", field, "The private key is encrypted; upload it unencrypted.")
		case len(b.Headers) > 0:
			return nil, violation("ERR_1910", field, "PEM block %d of private_key_pem has headers, which are not allowed.", i+1)
		case b.Type == pemECParameters:
		default:
			keys = append(keys, b)
		}
	}
	if len(keys) != 1 {
		return nil, violation("ERR_1903", field, "private_key_pem must hold exactly one private key; it holds %d.", len(keys))
	}
	key, err := parsePrivateKey(keys[0])
	if err != nil {
		return nil, violation("ERR_1903", field, "The private key format is unknown: %s.", Clip(err.Error()))
	}
	return key, nil
}

func parsePrivateKey(b *pem.Block) (crypto.Signer, error) {
	var key any
	var err error
	switch b.Type {
	case pemPKCS8Key:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	case pemRSAKey:
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case pemECKey:
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		return nil, fmt.Errorf("a PEM block of type %s is not a supported private key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)", Quote(b.Type))
	}
	if err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
		return k.(crypto.Signer), nil
	}
	return nil, fmt.Errorf("the key type %T is not supported (RSA, ECDSA or Ed25519)", key)
}

// CertificateAuthority runs the upload checks of details.md §6.7 on ca_pem ("" means not
// given): exactly one CERTIFICATE block, without headers, that carries the CA basic
// constraint.
func CertificateAuthority(caPEM string) (*x509.Certificate, error) {
	const field = "ca_pem"
	if strings.TrimSpace(caPEM) == "" {
		return nil, violation("ERR_1919", field, "No certificate PEM data was given in ca_pem.")
	}
	if len(caPEM) > MaxCAPEMBytes {
		return nil, violation("ERR_1921", field, "ca_pem is %d bytes long; the maximum is %d bytes.", len(caPEM), MaxCAPEMBytes)
	}
	blocks, complete := pemBlocks(caPEM)
	if len(blocks) == 0 || !complete {
		return nil, violation("ERR_1920", field, "ca_pem cannot be parsed as PEM: it must hold one -----BEGIN CERTIFICATE----- … -----END CERTIFICATE----- block.")
	}
	for i, b := range blocks {
		if len(b.Headers) > 0 {
			return nil, violation("ERR_1910", field, "PEM block %d of ca_pem has headers, which are not allowed.", i+1)
		}
		if b.Type != pemCertificate {
			return nil, violation("ERR_1911", field, "PEM block %d of ca_pem is of type %s; the type must be CERTIFICATE.", i+1, Quote(b.Type))
		}
	}
	if len(blocks) > 1 {
		return nil, violation("ERR_1912", field, "ca_pem holds %d certificates; upload one certificate authority at a time.", len(blocks))
	}
	cert, err := x509.ParseCertificate(blocks[0].Bytes)
	if err != nil {
		return nil, violation("ERR_1920", field, "The certificate in ca_pem cannot be parsed: %s.", Clip(err.Error()))
	}
	if !cert.BasicConstraintsValid || !cert.IsCA {
		return nil, violation("ERR_1913", field, "The certificate %s lacks the CA basic constraint, so it cannot be a certificate authority.", Quote(cert.Subject.CommonName))
	}
	return cert, nil
}

// pemBlocks returns the PEM blocks of s. Text around the blocks is ignored, as RFC 7468
// allows (e.g. the "subject=" lines openssl writes), but a BEGIN line that does not open a
// well-formed block makes complete false: pem.Decode skips such a block silently, and a
// truncated or damaged certificate must not vanish from a chain unnoticed.
func pemBlocks(s string) (blocks []*pem.Block, complete bool) {
	rest := []byte(s)
	for {
		b, next := pem.Decode(rest)
		if b == nil {
			return blocks, strings.Count(s, "-----BEGIN") == len(blocks)
		}
		blocks = append(blocks, b)
		rest = next
	}
}

// isPrivateKey reports whether a PEM type names a private key of any format.
func isPrivateKey(pemType string) bool { return strings.HasSuffix(pemType, "PRIVATE KEY") }
