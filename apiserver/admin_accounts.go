package apiserver

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// The operators' account administration under /_admin/accounts: list accounts and their
// users, disable and re-enable an account, delete one with everything it owns.

// adminAccounts serves GET /_admin/accounts: every account, newest first.
func (s *Server) adminAccounts(c *call) error {
	q, err := c.parseListQuery(ids.Account, nil)
	if err != nil {
		return err
	}
	return s.adminList(c, "/_admin/accounts", "accounts", q, store.ListQuery{Kind: kinds.Account, AllAccounts: true})
}

// adminAccountUsers serves GET /_admin/accounts/{account_id}/users: the account's users,
// newest first.
func (s *Server) adminAccountUsers(c *call) error {
	q, err := c.parseListQuery(ids.User, nil)
	if err != nil {
		return err
	}
	accountID := c.r.PathValue("account_id")
	return s.adminList(c, "/_admin/accounts/"+accountID+"/users", "users", q, store.ListQuery{Kind: kinds.User, AccountID: accountID}, accountID)
}

// adminList writes a page of stored documents as a list; with an account given, a 404 when
// it does not exist.
func (s *Server) adminList(c *call, path, member string, q listQuery, lq store.ListQuery, account ...string) error {
	lq.BeforeID, lq.Limit, lq.DocsOnly = q.beforeID, q.limit+1, true
	var objs []*store.Object
	err := c.read(func(tx store.Tx) (err error) {
		if len(account) > 0 {
			if _, _, err := getAccount(c, tx, account[0]); err != nil {
				return err
			}
		}
		objs, err = tx.List(c.r.Context(), lq)
		return err
	})
	if err != nil {
		return err
	}
	objs, more := lookAhead(objs, q.limit)
	items := make([]json.RawMessage, len(objs))
	lastID := ""
	for i, o := range objs {
		items[i], lastID = o.Doc, o.ID
	}
	return c.writeList(path, member, q, items, lastID, more)
}

// adminGetAccount serves GET /_admin/accounts/{account_id}.
func (s *Server) adminGetAccount(c *call) error {
	var account api.Account
	err := c.read(func(tx store.Tx) (err error) {
		account, _, err = getAccount(c, tx, c.r.PathValue("account_id"))
		return err
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusOK, account)
}

// adminDisableAccount serves POST /_admin/accounts/{account_id}/disable: the account's API
// keys and tunnel credentials are refused (403 ERR_204) until it is enabled again, and its
// agents' sessions end, in the same transaction; nothing is deleted.
func (s *Server) adminDisableAccount(c *call) error { return s.setAccountDisabled(c, true) }

// adminEnableAccount serves POST /_admin/accounts/{account_id}/enable.
func (s *Server) adminEnableAccount(c *call) error { return s.setAccountDisabled(c, false) }

func (s *Server) setAccountDisabled(c *call, disabled bool) error {
	var in struct{}
	if _, err := c.decodeBody(&in); err != nil {
		return err
	}
	ctx := c.r.Context()
	var account api.Account
	var ended []string
	err := c.write(func(tx store.Tx) (err error) {
		ended = nil // the store may run fn again
		var obj *store.Object
		if account, obj, err = getAccount(c, tx, c.r.PathValue("account_id")); err != nil {
			return err
		}
		if disabled {
			if ended, err = accountSessions(c, tx, account.ID); err != nil {
				return err
			}
			for _, id := range ended {
				if err := s.agents.EndSession(ctx, tx, id); err != nil {
					return err
				}
			}
		}
		if account.Disabled == disabled {
			return nil
		}
		account.Disabled = disabled
		if obj.Doc, err = json.Marshal(account); err != nil {
			return err
		}
		return tx.Update(ctx, obj)
	})
	if err != nil {
		return err
	}
	s.agents.EndWith("the session's account was disabled", ended)
	return c.writeJSON(http.StatusOK, account)
}

// adminDeleteAccount serves DELETE /_admin/accounts/{account_id}: the account and every
// object, event and delivery of it, in one transaction. Its agents' sockets close once it
// commits; no event is written, as the account's destinations go with it.
func (s *Server) adminDeleteAccount(c *call) error {
	ctx := c.r.Context()
	var ended []string
	err := c.write(func(tx store.Tx) error {
		account, _, err := getAccount(c, tx, c.r.PathValue("account_id"))
		if err != nil {
			return err
		}
		if ended, err = accountSessions(c, tx, account.ID); err != nil {
			return err
		}
		return tx.DeleteAccount(ctx, account.ID)
	})
	if err != nil {
		return err
	}
	s.agents.EndWith("the session's account was deleted", ended)
	return c.noContent()
}

// getAccount reads an account and its stored object, or answers 404.
func getAccount(c *call, tx store.Tx, id string) (api.Account, *store.Object, error) {
	var account api.Account
	obj, err := tx.Get(c.r.Context(), kinds.Account, id)
	if isNotFound(err) {
		return account, nil, apierr.NotFound()
	}
	if err != nil {
		return account, nil, err
	}
	return account, obj, json.Unmarshal(obj.Doc, &account)
}

// accountSessions are the IDs of the account's agent sessions, on every replica.
func accountSessions(c *call, tx store.Tx, accountID string) ([]string, error) {
	objs, err := tx.List(c.r.Context(), store.ListQuery{Kind: kinds.TunnelSession, AccountID: accountID, DocsOnly: true})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.ID
	}
	return out, nil
}

// accountEnabled reads an account in tx and refuses it when disabled (checkAccountEnabled).
func accountEnabled(ctx context.Context, tx store.Tx, accountID string) error {
	account, err := tx.Get(ctx, kinds.Account, accountID)
	if err != nil && !isNotFound(err) {
		return err
	}
	return checkAccountEnabled(account)
}

// checkAccountEnabled refuses the credentials of a disabled account (403 ERR_204, details.md
// §5.3: a valid token whose account may not use the API). account is the account's stored
// object; nil when the caller found none (an account stored before accounts were objects
// of their own cannot be disabled).
func checkAccountEnabled(account *store.Object) error {
	if account == nil {
		return nil
	}
	var a struct {
		ID       string `json:"id"`
		Disabled bool   `json:"disabled"`
	}
	if err := json.Unmarshal(account.Doc, &a); err != nil {
		return err
	}
	if a.Disabled {
		return apierr.Forbidden("ERR_204", "The account %s is disabled; its API keys and tunnel credentials are refused until an operator enables it again.", a.ID)
	}
	return nil
}
