package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// BootstrapAccountKey is the unique key the first account claims, so a restarted server
// knows the store is already bootstrapped (and tests can find that account).
const BootstrapAccountKey = "bootstrap"

// bootstrap creates the first account, its admin user and an admin API key when the store is
// empty. It returns the token when it generated one. On a store bootstrapped before, a given
// BootstrapAPIKey that is no key of the store is ignored with a warning.
func (s *Server) bootstrap(ctx context.Context) (generated string, err error) {
	token := s.opts.BootstrapAPIKey
	created := false
	err = s.opts.Store.Write(ctx, func(tx store.Tx) error {
		created, generated = false, "" // the store may run fn again
		if _, err := tx.Lookup(ctx, BootstrapAccountKey); err == nil {
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		account, err := s.insertAccount(ctx, tx, "default", BootstrapAccountKey)
		if err != nil {
			return err
		}
		key := token
		if key == "" {
			key = ids.NewToken(ids.New(ids.APIKey))
			generated = key
		}
		created = true
		_, _, err = s.insertGrant(ctx, tx, account.ID, "admin@localhost", api.RoleAdmin, key)
		return err
	})
	// Another replica sharing the database bootstrapped it first: it is bootstrapped.
	var dup *store.DuplicateError
	if errors.As(err, &dup) && dup.Key == BootstrapAccountKey {
		err, created, generated = nil, false, ""
	}
	if err != nil || created || token == "" {
		return generated, err
	}
	known, err := s.tokenKnown(ctx, token)
	if err != nil {
		return "", err
	}
	if !known {
		// Never the token itself: only that it is unused and what to do instead.
		s.log.Warn("the bootstrap API key is ignored: the database was bootstrapped before and holds no API key with this token",
			zap.String("hint", "create another key with POST /api_keys and an admin API key, or with POST /_admin/accounts/{account_id}/users and the admin token"))
	}
	return "", nil
}

// checkBootstrapKey checks the shape of Options.BootstrapAPIKey.
func checkBootstrapKey(token string) error {
	if token == "" {
		return nil
	}
	if _, _, ok := ids.SplitToken(token); !ok {
		return errors.New("the bootstrap API key must have the shape <27 base62>_<21 base62>; generate one with 'warren-apiserver token'")
	}
	return nil
}

// tokenKnown says whether token is the token of a stored API key.
func (s *Server) tokenKnown(ctx context.Context, token string) (bool, error) {
	body, _, _ := ids.SplitToken(token)
	known := false
	err := s.opts.Store.Read(ctx, func(tx store.Tx) error {
		key, err := tx.Get(ctx, kinds.APIKey, ids.APIKey+body)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		var secret kinds.TokenSecret
		if err := json.Unmarshal(key.Secret, &secret); err != nil {
			return err
		}
		known = ids.TokenMatches(token, secret.TokenHash)
		return nil
	})
	return known, err
}

// adminCreateAccount is POST /_admin/accounts: a new account with an admin user and a key.
func (s *Server) adminCreateAccount(c *call) error {
	var in api.AdminAccountCreate
	if _, err := c.decodeBody(&in); err != nil {
		return err
	}
	if strings.TrimSpace(in.Name) == "" {
		return apierr.BadRequest("ERR_215", "The account name must not be empty.")
	}
	if err := identifiers("ERR_215", "name", in.Name, "admin_email", in.AdminEmail); err != nil {
		return err
	}
	if in.AdminEmail == "" {
		in.AdminEmail = "admin@" + strings.ToLower(strings.ReplaceAll(in.Name, " ", "-")) + ".invalid"
	}
	var grant api.AdminGrant
	err := c.write(func(tx store.Tx) (err error) {
		if grant.Account, err = s.insertAccount(c.r.Context(), tx, in.Name, ""); err != nil {
			return err
		}
		grant.User, grant.APIKey, err = s.insertGrant(c.r.Context(), tx, grant.Account.ID, in.AdminEmail, api.RoleAdmin, "")
		return err
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusCreated, grant)
}

// adminCreateUser is POST /_admin/accounts/{account_id}/users: a user with a role and a key.
func (s *Server) adminCreateUser(c *call) error {
	var in api.AdminUserCreate
	if _, err := c.decodeBody(&in); err != nil {
		return err
	}
	if in.Role != api.RoleAdmin && in.Role != api.RoleMember {
		return apierr.BadRequest("ERR_215", "The role must be %q or %q.", api.RoleAdmin, api.RoleMember)
	}
	if err := rules.Identifier("ERR_215", "email", in.Email); err != nil {
		return err
	}
	if !strings.Contains(in.Email, "@") {
		return apierr.BadRequest("ERR_215", "The email %s is not valid.", rules.Quote(in.Email))
	}
	var grant api.AdminGrant
	err := c.write(func(tx store.Tx) error {
		obj, err := tx.Get(c.r.Context(), kinds.Account, c.r.PathValue("account_id"))
		if errors.Is(err, store.ErrNotFound) {
			return apierr.NotFound()
		} else if err != nil {
			return err
		}
		if err := json.Unmarshal(obj.Doc, &grant.Account); err != nil {
			return err
		}
		grant.User, grant.APIKey, err = s.insertGrant(c.r.Context(), tx, obj.ID, in.Email, in.Role, "")
		var dup *store.DuplicateError
		if errors.As(err, &dup) {
			return apierr.BadRequest("ERR_215", "A user with the email %s already exists in the account.", rules.Quote(in.Email))
		}
		return err
	})
	if err != nil {
		return err
	}
	return c.writeJSON(http.StatusCreated, grant)
}

func (s *Server) insertAccount(ctx context.Context, tx store.Tx, name, uniqueKey string) (api.Account, error) {
	account := api.Account{ID: ids.New(ids.Account), Name: name, CreatedAt: api.FormatTime(s.opts.Now())}
	obj := &store.Object{Kind: kinds.Account, ID: account.ID, AccountID: account.ID}
	if uniqueKey != "" {
		obj.UniqueKeys = []string{uniqueKey}
	}
	return account, insertDoc(ctx, tx, obj, account)
}

// insertGrant creates a user and an API key that acts as the user. The key's token is token
// when given (its ID is then ak_ + the token's first part), else a fresh one.
func (s *Server) insertGrant(ctx context.Context, tx store.Tx, accountID, email, role, token string) (api.User, api.APIKey, error) {
	now := api.FormatTime(s.opts.Now())
	user := api.User{ID: ids.New(ids.User), AccountID: accountID, Email: email, Role: role, CreatedAt: now}
	userObj := &store.Object{Kind: kinds.User, ID: user.ID, AccountID: accountID, UniqueKeys: []string{kinds.UserEmailKey(accountID, email)}}
	if err := insertDoc(ctx, tx, userObj, user); err != nil {
		return user, api.APIKey{}, err
	}
	keyID := ids.New(ids.APIKey)
	if token != "" {
		body, _, _ := ids.SplitToken(token)
		keyID = ids.APIKey + body
	} else {
		token = ids.NewToken(keyID)
	}
	key := api.APIKey{Meta: api.Meta{ID: keyID, CreatedAt: now}, Description: "key of " + email, OwnerID: user.ID}
	secret, _ := json.Marshal(kinds.TokenSecret{TokenHash: ids.HashToken(token)})
	keyObj := &store.Object{Kind: kinds.APIKey, ID: keyID, AccountID: accountID, Secret: secret, Refs: []string{user.ID}}
	if err := insertDoc(ctx, tx, keyObj, key); err != nil {
		return user, key, err
	}
	key.URI = s.opts.BaseURL + apiKeys.def.Path + "/" + keyID
	key.SetToken(token)
	return user, key, nil
}

// insertDoc stores obj with doc as its JSON document.
func insertDoc(ctx context.Context, tx store.Tx, obj *store.Object, doc any) error {
	var err error
	if obj.Doc, err = json.Marshal(doc); err != nil {
		return err
	}
	return tx.Insert(ctx, obj)
}
