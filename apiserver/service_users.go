package apiserver

import (
	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// serviceUsers is /service_users and botUsers its deprecated alias /bot_users (details.md
// §6.13): one set of objects seen through two paths. Only admins may change them.
var (
	serviceUsers = serviceUserFamily(api.ServiceUsers, filter.Fields{"id": filter.String, "created_at": filter.Timestamp})
	botUsers     = serviceUserFamily(api.BotUsers, nil)
)

func serviceUserFamily(def *api.Family, fields filter.Fields) *family[api.ServiceUser, *api.ServiceUser, api.ServiceUserCreate, api.ServiceUserUpdate] {
	return &family[api.ServiceUser, *api.ServiceUser, api.ServiceUserCreate, api.ServiceUserUpdate]{
		kind:   kinds.ServiceUser,
		def:    def,
		filter: fields,
		create: func(c *call, tx store.Tx, in *api.ServiceUserCreate, su *api.ServiceUser) (any, error) {
			if err := requireAdmin(c); err != nil {
				return nil, err
			}
			if err := rules.ServiceUserName(deref(in.Name)); err != nil {
				return nil, err
			}
			su.Name, su.Active = *in.Name, in.Active == nil || *in.Active
			return nil, nil
		},
		update: func(c *call, tx store.Tx, in *api.ServiceUserUpdate, su *api.ServiceUser) error {
			if err := requireAdmin(c); err != nil {
				return err
			}
			if in.Name != nil {
				if err := rules.ServiceUserName(*in.Name); err != nil {
					return err
				}
				su.Name = *in.Name
			}
			if in.Active != nil {
				su.Active = *in.Active
			}
			return nil
		},
		unique: func(accountID string, su *api.ServiceUser) []string {
			return []string{kinds.ServiceUserNameKey(accountID, su.Name)}
		},
		duplicate: func(c *call, tx store.Tx, dup *store.DuplicateError) error {
			return apierr.WithDetail(apierr.BadRequest("ERR_4112", "A service user with this name already exists in the account (%s).", dup.HolderID), "param", "name")
		},
		// A service user's API keys and credentials go with it, so they stop working at once.
		beforeDelete: func(c *call, tx store.Tx, su *api.ServiceUser) error {
			if err := requireAdmin(c); err != nil {
				return err
			}
			owned, err := tx.Referrers(c.r.Context(), su.ID)
			if err != nil {
				return err
			}
			for _, o := range owned {
				if o.Kind == kinds.Credential {
					if err := c.endCredentialSessions(tx, o.ID); err != nil {
						return err
					}
				}
				if err := tx.Delete(c.r.Context(), o.Kind, o.ID); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// requireAdmin is ERR_4111: only admins may manage service users.
func requireAdmin(c *call) error {
	if !c.who.admin() {
		return apierr.Forbidden("ERR_4111", "Only admins may create, update or delete service users.")
	}
	return nil
}
