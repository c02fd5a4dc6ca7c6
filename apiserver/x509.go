package apiserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"strings"
)

// The wire names of key usages and extended key usages (details.md §7.7 leaves the spellings
// open): the Go constant's name in lowercase snake case. An extended key usage without a name
// here (one Go does not know, or a newer one) is given as its dotted OID.
var (
	keyUsageNames = []struct {
		bit  x509.KeyUsage
		name string
	}{
		{x509.KeyUsageDigitalSignature, "digital_signature"},
		{x509.KeyUsageContentCommitment, "content_commitment"},
		{x509.KeyUsageKeyEncipherment, "key_encipherment"},
		{x509.KeyUsageDataEncipherment, "data_encipherment"},
		{x509.KeyUsageKeyAgreement, "key_agreement"},
		{x509.KeyUsageCertSign, "cert_sign"},
		{x509.KeyUsageCRLSign, "crl_sign"},
		{x509.KeyUsageEncipherOnly, "encipher_only"},
		{x509.KeyUsageDecipherOnly, "decipher_only"},
	}
	extKeyUsageNames = map[x509.ExtKeyUsage]string{
		x509.ExtKeyUsageAny:                            "any",
		x509.ExtKeyUsageServerAuth:                     "server_auth",
		x509.ExtKeyUsageClientAuth:                     "client_auth",
		x509.ExtKeyUsageCodeSigning:                    "code_signing",
		x509.ExtKeyUsageEmailProtection:                "email_protection",
		x509.ExtKeyUsageIPSECEndSystem:                 "ipsec_end_system",
		x509.ExtKeyUsageIPSECTunnel:                    "ipsec_tunnel",
		x509.ExtKeyUsageIPSECUser:                      "ipsec_user",
		x509.ExtKeyUsageTimeStamping:                   "time_stamping",
		x509.ExtKeyUsageOCSPSigning:                    "ocsp_signing",
		x509.ExtKeyUsageMicrosoftServerGatedCrypto:     "microsoft_server_gated_crypto",
		x509.ExtKeyUsageNetscapeServerGatedCrypto:      "netscape_server_gated_crypto",
		x509.ExtKeyUsageMicrosoftCommercialCodeSigning: "microsoft_commercial_code_signing",
		x509.ExtKeyUsageMicrosoftKernelCodeSigning:     "microsoft_kernel_code_signing",
	}
)

// keyUsages returns the names of the key usage bits of cert, [] when none.
func keyUsages(cert *x509.Certificate) []string {
	out := []string{}
	for _, u := range keyUsageNames {
		if cert.KeyUsage&u.bit != 0 {
			out = append(out, u.name)
		}
	}
	return out
}

// extKeyUsages returns the names of the extended key usages of cert in certificate order,
// [] when none.
func extKeyUsages(cert *x509.Certificate) []string {
	out := []string{}
	for _, u := range cert.ExtKeyUsage {
		name, known := extKeyUsageNames[u]
		if !known {
			name = u.OID().String() // a usage newer than this table
		}
		out = append(out, name)
	}
	for _, oid := range cert.UnknownExtKeyUsage {
		out = append(out, oid.String())
	}
	return out
}

// privateKeyType names the type of a key that rules.TLSCertificate accepted.
func privateKeyType(key crypto.Signer) string {
	switch key.(type) {
	case *rsa.PrivateKey:
		return "rsa"
	case *ecdsa.PrivateKey:
		return "ecdsa"
	case ed25519.PrivateKey:
		return "ed25519"
	}
	return ""
}

// serialNumber renders a serial as lowercase hex of its big-endian bytes, without separators
// (so a leading zero nibble is kept, as in details.md's example `054ba70d…`).
func serialNumber(cert *x509.Certificate) string {
	b := cert.SerialNumber.Bytes()
	if len(b) == 0 {
		return "00"
	}
	return hex.EncodeToString(b)
}

// nameValue joins the values of a multi-valued subject attribute (O, OU, L, ST, C); "" when
// it is absent.
func nameValue(values []string) string { return strings.Join(values, ", ") }
