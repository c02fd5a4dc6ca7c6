package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// sshCredentials is /ssh_credentials (details.md §6.3). The public key is parsed to reject
// garbage and to find duplicates by fingerprint, and echoed back verbatim.
var sshCredentials = &family[api.SSHCredential, *api.SSHCredential, api.SSHCredentialCreate, api.SSHCredentialUpdate]{
	kind:   kinds.SSHCredential,
	def:    api.SSHCredentials,
	filter: withFields(textFields, filter.Fields{"owner_id": filter.String, "acl": filter.StringList}),
	create: func(c *call, tx store.Tx, in *api.SSHCredentialCreate, cred *api.SSHCredential) (any, error) {
		if err := setText(rules.SSHCredentialText, in.Description, in.Metadata, &cred.Description, &cred.Metadata); err != nil {
			return nil, err
		}
		if _, err := rules.SSHPublicKey(deref(in.PublicKey)); err != nil {
			return nil, err
		}
		acl, err := aclValue(in.ACL, nil)
		if err != nil {
			return nil, err
		}
		cred.PublicKey, cred.ACL = *in.PublicKey, acl
		cred.OwnerID, err = c.resolveOwner(tx, in.OwnerID)
		return nil, err
	},
	update: func(c *call, tx store.Tx, in *api.SSHCredentialUpdate, cred *api.SSHCredential) (err error) {
		if err := keepOwner("ERR_629", in.OwnerID, cred.OwnerID); err != nil {
			return err
		}
		if err := setText(rules.SSHCredentialText, in.Description, in.Metadata, &cred.Description, &cred.Metadata); err != nil {
			return err
		}
		cred.ACL, err = aclValue(in.ACL, cred.ACL)
		return err
	},
	refs: func(cred *api.SSHCredential) []string { return []string{cred.OwnerID} },
	// One key identifies one principal across the whole server (ERR_609 / ERR_610).
	unique: func(_ string, cred *api.SSHCredential) []string {
		fp, _ := rules.SSHPublicKey(cred.PublicKey)
		return []string{kinds.SSHPublicKeyKey(fp)}
	},
	duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
		holder, err := tx.Lookup(c.r.Context(), dup.Key)
		if err == nil && holder.AccountID == c.who.accountID {
			return apierr.WithDetail(apierr.BadRequest("ERR_609", "This public key is already registered on this account as %s.", holder.ID), "param", "public_key")
		}
		return apierr.WithDetail(apierr.BadRequest("ERR_610", "This public key is used by another account."), "param", "public_key")
	},
}
