package cluster

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// credentials are a replica's TLS configurations for the link. Each key of the link's
// keyring (KeysFor: the current one, and the previous ones during a rotation) is the seed
// of an ed25519 key with a self-signed CA certificate named after it, the same on every
// replica. These certificates are the only roots either end trusts, and TLS verifies the
// peer's certificate against them as usual (chain, name, usage), so a peer is authenticated
// when its certificate's key is one of ours, which TLS 1.3 makes it prove it holds.
//
// A replica presents the certificate of its current key unless the peer asks for another:
// a client names a key as the server name (its current one first, then each previous one
// while the names do not match), and a server lists the certificates it accepts
// (certificate_authorities). So replicas in the middle of a rotation, one with the new key
// and the old, one with the old only, still link both ways.
type credentials struct {
	ids     []identity    // the current key's first
	clients []*tls.Config // one per identity, naming it as the server name
	server  *tls.Config
}

type identity struct {
	name string // the server name that asks for it
	cert tls.Certificate
}

func newCredentials(keys *sealing.Keyring) (*credentials, error) {
	if keys == nil {
		return nil, errors.New("cluster: the link needs its keys (KeysFor)")
	}
	c := &credentials{}
	roots := x509.NewCertPool()
	for _, seed := range keys.Secrets() {
		id, err := newIdentity(seed)
		if err != nil {
			return nil, err
		}
		roots.AddCert(id.cert.Leaf)
		c.ids = append(c.ids, id)
	}
	c.server = &tls.Config{
		MinVersion:       tls.VersionTLS13,
		NextProtos:       []string{ALPN},
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        roots,
		GetCertificate:   c.serverCertificate,
		VerifyConnection: speaksLink,
	}
	for _, id := range c.ids {
		c.clients = append(c.clients, &tls.Config{
			MinVersion:           tls.VersionTLS13,
			NextProtos:           []string{ALPN},
			ServerName:           id.name,
			RootCAs:              roots,
			GetClientCertificate: c.clientCertificate,
			VerifyConnection:     speaksLink,
		})
	}
	return c, nil
}

// newIdentity is the key whose seed is a link key, and its certificate.
func newIdentity(seed []byte) (identity, error) {
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	sum := sha256.Sum256(pub)
	name := hex.EncodeToString(sum[:8]) + ".cluster-link.warren.invalid"
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		DNSNames:              []string{name},
		NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:              time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return identity{}, fmt.Errorf("cluster: the link's certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return identity{}, fmt.Errorf("cluster: the link's certificate: %w", err)
	}
	return identity{name: name, cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv, Leaf: leaf}}, nil
}

// serverCertificate is the certificate of the key the client named, else the current one.
func (c *credentials) serverCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	for _, id := range c.ids {
		if id.name == hello.ServerName {
			return &id.cert, nil
		}
	}
	return &c.ids[0].cert, nil
}

// clientCertificate is the certificate of the first key that the server accepts, else the
// current one (which the server refuses).
func (c *credentials) clientCertificate(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	for _, id := range c.ids {
		if slices.ContainsFunc(req.AcceptableCAs, func(s []byte) bool { return bytes.Equal(s, id.cert.Leaf.RawSubject) }) {
			return &id.cert, nil
		}
	}
	return &c.ids[0].cert, nil
}

// speaksLink refuses a verified peer that does not speak this version of the link.
func speaksLink(cs tls.ConnectionState) error {
	if cs.NegotiatedProtocol != ALPN {
		return fmt.Errorf("cluster: the peer does not speak %s", ALPN)
	}
	return nil
}

// unauthenticated reports whether a handshake failed on the peer's certificate (not one of
// the link's keys, or named after another of them).
func unauthenticated(err error) bool {
	var verr *tls.CertificateVerificationError
	return errors.As(err, &verr)
}
