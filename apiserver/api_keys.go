package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// apiKeys is /api_keys (details.md §6.1). The token is minted by the generic create.
var apiKeys = &family[api.APIKey, *api.APIKey, api.APIKeyCreate, api.APIKeyUpdate]{
	kind:   kinds.APIKey,
	def:    api.APIKeys,
	filter: withFields(textFields, filter.Fields{"owner_id": filter.String}),
	token:  true,
	create: func(c *call, tx store.Tx, in *api.APIKeyCreate, key *api.APIKey) (any, error) {
		if err := setText(rules.APIKeyText, in.Description, in.Metadata, &key.Description, &key.Metadata); err != nil {
			return nil, err
		}
		owner, err := c.resolveOwner(tx, in.OwnerID)
		key.OwnerID = owner
		return nil, err
	},
	update: func(c *call, tx store.Tx, in *api.APIKeyUpdate, key *api.APIKey) error {
		if err := keepOwner("ERR_628", in.OwnerID, key.OwnerID); err != nil {
			return err
		}
		return setText(rules.APIKeyText, in.Description, in.Metadata, &key.Description, &key.Metadata)
	},
	refs: func(key *api.APIKey) []string { return []string{key.OwnerID} },
}
