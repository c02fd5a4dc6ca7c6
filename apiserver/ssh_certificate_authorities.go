package apiserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// sshCAs is /ssh_certificate_authorities (details.md §6.4): the server generates the key
// pair, returns the public key in authorized_keys form and keeps the private key.
var sshCAs = &family[api.SSHCertificateAuthority, *api.SSHCertificateAuthority, api.SSHCertificateAuthorityCreate, api.SSHCertificateAuthorityUpdate]{
	kind:   kinds.SSHCA,
	def:    api.SSHCertificateAuthorities,
	filter: textFields,
	create: func(c *call, tx store.Tx, in *api.SSHCertificateAuthorityCreate, ca *api.SSHCertificateAuthority) (any, error) {
		if err := setText(rules.SSHCAText, in.Description, in.Metadata, &ca.Description, &ca.Metadata); err != nil {
			return nil, err
		}
		if err := rules.SSHCAKey(in.PrivateKeyType, in.KeySize, in.EllipticCurve); err != nil {
			return nil, err
		}
		keyType := rules.DefaultSSHKeyType
		if in.PrivateKeyType != nil {
			keyType = *in.PrivateKeyType
		}
		private, err := generateSSHKey(keyType, in.KeySize, in.EllipticCurve)
		if err != nil {
			return nil, err
		}
		public, err := ssh.NewPublicKey(private.Public())
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(private)
		if err != nil {
			return nil, err
		}
		ca.KeyType = keyType
		ca.PublicKey = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(public)))
		return kinds.SSHCASecret{PrivateKeyPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))}, nil
	},
	update: func(c *call, tx store.Tx, in *api.SSHCertificateAuthorityUpdate, ca *api.SSHCertificateAuthority) error {
		return setText(rules.SSHCAText, in.Description, in.Metadata, &ca.Description, &ca.Metadata)
	},
}

// generateSSHKey makes a key pair of a type and size or curve that rules.SSHCAKey accepted.
func generateSSHKey(keyType string, keySize *int64, curve *string) (crypto.Signer, error) {
	switch keyType {
	case "rsa":
		bits := int64(rules.DefaultRSAKeySize)
		if keySize != nil {
			bits = *keySize
		}
		return rsa.GenerateKey(rand.Reader, int(bits))
	case "ecdsa":
		name := rules.DefaultCurve
		if curve != nil {
			name = *curve
		}
		c := map[string]elliptic.Curve{"p256": elliptic.P256(), "p384": elliptic.P384(), "p521": elliptic.P521()}[name]
		return ecdsa.GenerateKey(c, rand.Reader)
	default:
		_, key, err := ed25519.GenerateKey(rand.Reader)
		return key, err
	}
}
