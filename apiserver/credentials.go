package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// credentials is /credentials, the tunnel authtokens (details.md §6.2).
var credentials = &family[api.Credential, *api.Credential, api.CredentialCreate, api.CredentialUpdate]{
	kind:            kinds.Credential,
	def:             api.Credentials,
	filter:          withFields(textFields, filter.Fields{"owner_id": filter.String, "acl": filter.StringList}),
	token:           true,
	emptyUpdateCode: "ERR_606",
	create: func(c *call, tx store.Tx, in *api.CredentialCreate, cred *api.Credential) (any, error) {
		if err := setText(rules.CredentialText, in.Description, in.Metadata, &cred.Description, &cred.Metadata); err != nil {
			return nil, err
		}
		acl, err := aclValue(in.ACL, nil)
		if err != nil {
			return nil, err
		}
		cred.ACL = acl
		cred.OwnerID, err = c.resolveOwner(tx, in.OwnerID)
		return nil, err
	},
	update: func(c *call, tx store.Tx, in *api.CredentialUpdate, cred *api.Credential) (err error) {
		if err := keepOwner("ERR_627", in.OwnerID, cred.OwnerID); err != nil {
			return err
		}
		if err := setText(rules.CredentialText, in.Description, in.Metadata, &cred.Description, &cred.Metadata); err != nil {
			return err
		}
		cred.ACL, err = aclValue(in.ACL, cred.ACL)
		return err
	},
	refs: func(cred *api.Credential) []string { return []string{cred.OwnerID} },
	// A deleted credential ends its agents' sessions at once.
	beforeDelete: func(c *call, tx store.Tx, cred *api.Credential) error {
		return c.endCredentialSessions(tx, cred.ID)
	},
}

// aclValue validates a given ACL, or keeps the current one when none is given (nil). The
// wire form of "no rules" is [], never null.
func aclValue(given, current []string) ([]string, error) {
	if given == nil {
		given = current
	}
	if err := rules.ACL(given); err != nil {
		return nil, err
	}
	if given == nil {
		given = []string{}
	}
	return given, nil
}
