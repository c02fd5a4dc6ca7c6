package api

// APIKey authenticates calls to the API (/api_keys).
type APIKey struct {
	Meta
	Description string  `json:"description,omitempty"`
	Metadata    string  `json:"metadata,omitempty"`
	Token       *string `json:"token"`
	OwnerID     string  `json:"owner_id"`
}

// APIKeyCreate is the body of POST /api_keys.
type APIKeyCreate struct {
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	OwnerID     *string `json:"owner_id,omitempty"`
}

// APIKeyUpdate is the body of PATCH /api_keys/{id}.
type APIKeyUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
	// OwnerID is accepted only when it names the current owner: owners never change.
	OwnerID *string `json:"owner_id,omitempty"`
}

// Credential is a tunnel authtoken credential (/credentials).
type Credential struct {
	Meta
	Description string   `json:"description,omitempty"`
	Metadata    string   `json:"metadata,omitempty"`
	Token       *string  `json:"token"`
	ACL         []string `json:"acl"`
	OwnerID     string   `json:"owner_id"`
}

// CredentialCreate is the body of POST /credentials.
type CredentialCreate struct {
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	ACL         []string `json:"acl,omitempty"`
	OwnerID     *string  `json:"owner_id,omitempty"`
}

// CredentialUpdate is the body of PATCH /credentials/{id}. A nil ACL keeps the stored rules;
// an empty one clears them.
type CredentialUpdate struct {
	ID          *string  `json:"id,omitempty"`
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	ACL         []string `json:"acl"`
	OwnerID     *string  `json:"owner_id,omitempty"` // only the current owner (owners never change)
}

// SSHCredential is an SSH public key that may start tunnel sessions (/ssh_credentials).
type SSHCredential struct {
	Meta
	Description string   `json:"description,omitempty"`
	Metadata    string   `json:"metadata,omitempty"`
	PublicKey   string   `json:"public_key"`
	ACL         []string `json:"acl"`
	OwnerID     string   `json:"owner_id"`
}

// SSHCredentialCreate is the body of POST /ssh_credentials.
type SSHCredentialCreate struct {
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	ACL         []string `json:"acl,omitempty"`
	PublicKey   *string  `json:"public_key,omitempty" required:"true"`
	OwnerID     *string  `json:"owner_id,omitempty"`
}

// SSHCredentialUpdate is the body of PATCH /ssh_credentials/{id}.
type SSHCredentialUpdate struct {
	ID          *string  `json:"id,omitempty"`
	Description *string  `json:"description,omitempty"`
	Metadata    *string  `json:"metadata,omitempty"`
	ACL         []string `json:"acl"`
	OwnerID     *string  `json:"owner_id,omitempty"` // only the current owner (owners never change)
}

// SSHCertificateAuthority is a server-generated SSH CA key pair (/ssh_certificate_authorities).
// The private key never leaves the server.
type SSHCertificateAuthority struct {
	Meta
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
	PublicKey   string `json:"public_key"`
	KeyType     string `json:"key_type" enum:"ssh_key_type"`
}

// SSHCertificateAuthorityCreate is the body of POST /ssh_certificate_authorities.
type SSHCertificateAuthorityCreate struct {
	Description    *string `json:"description,omitempty"`
	Metadata       *string `json:"metadata,omitempty"`
	PrivateKeyType *string `json:"private_key_type,omitempty" enum:"ssh_key_type"`
	EllipticCurve  *string `json:"elliptic_curve,omitempty" enum:"ssh_elliptic_curve"`
	KeySize        *int64  `json:"key_size,omitempty"`
}

// SSHCertificateAuthorityUpdate is the body of PATCH /ssh_certificate_authorities/{id}.
type SSHCertificateAuthorityUpdate struct {
	ID          *string `json:"id,omitempty"`
	Description *string `json:"description,omitempty"`
	Metadata    *string `json:"metadata,omitempty"`
}

// ServiceUser is a non-human principal (/service_users, also served as /bot_users).
type ServiceUser struct {
	Meta
	Name   string `json:"name"`
	Active bool   `json:"active"`
}

// ServiceUserCreate is the body of POST /service_users.
type ServiceUserCreate struct {
	Name   *string `json:"name,omitempty" required:"true"`
	Active *bool   `json:"active,omitempty"`
}

// ServiceUserUpdate is the body of PATCH /service_users/{id}.
type ServiceUserUpdate struct {
	ID     *string `json:"id,omitempty"`
	Name   *string `json:"name,omitempty"`
	Active *bool   `json:"active,omitempty"`
}

// SetToken records the token minted on create; only the create response carries it.
func (k *APIKey) SetToken(token string) { k.Token = &token }

// SetToken records the token minted on create; only the create response carries it.
func (c *Credential) SetToken(token string) { c.Token = &token }
