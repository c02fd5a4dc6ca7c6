package apiserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// principal is who a request acts as: the owner of the API key it presented.
type principal struct {
	accountID string
	id        string // usr_… or service_…
	role      string // api.RoleAdmin or api.RoleMember
	keyID     string
	subject   string // the user's e-mail or the service user's name, for events (§9.3)
}

func (p principal) admin() bool { return p.role == api.RoleAdmin }

// authenticate resolves the Authorization header to a principal, with the 403 codes of
// details.md §5.2–5.3. A key is looked up by the ID its token names, then its hash compared,
// so a new key works at once and a deleted one stops at once. The account's api IP
// restriction is checked in the same transaction (ERR_220, api_ip_restriction.go), and a
// disabled account refused (ERR_204).
func (c *call) authenticate() error {
	header, err := authorizationHeader(c.r)
	if err != nil {
		return err
	}
	if header == "" {
		return apierr.Forbidden("ERR_200", "The Authorization header is missing. Send 'Authorization: Bearer <API key token>'.")
	}
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return apierr.Forbidden("ERR_201", "The Authorization header could not be parsed; expected 'Bearer <API key token>'.")
	}
	token = strings.TrimSpace(token)
	if strings.HasPrefix(token, ids.APIKey) {
		return apierr.Forbidden("ERR_208", "The credential is an API key ID, not its token. Use the token returned when the key was created.")
	}
	body, _, ok := ids.SplitToken(token)
	if !ok {
		// Never echoed: a mistyped token is still a secret.
		return apierr.Forbidden("ERR_202", "The credential does not look like a valid API key token (FIRSTPART_SECONDPART).")
	}
	var who principal
	var verdict restrictionVerdict
	err = c.read(func(tx store.Tx) error {
		// The key, its owner (its ref) and the account's api restriction, in one query.
		key, with, err := tx.GetWith(c.r.Context(), kinds.APIKey, ids.APIKey+body, apiRestrictionAccountKey)
		if errors.Is(err, store.ErrNotFound) {
			if _, err := tx.Get(c.r.Context(), kinds.Credential, ids.Credential+body); err == nil {
				return apierr.Forbidden("ERR_206", "The credential is a tunnel authtoken, not an API key. Create an API key for this API.")
			}
			return apierr.Forbidden("ERR_203", "The API key token is not valid: it is unknown or was revoked.")
		}
		if err != nil {
			return err
		}
		var secret kinds.TokenSecret
		if err := json.Unmarshal(key.Secret, &secret); err != nil {
			return err
		}
		if !ids.TokenMatches(token, secret.TokenHash) {
			return apierr.Forbidden("ERR_203", "The API key token is not valid: it is unknown or was revoked.")
		}
		// Only the members authentication reads are decoded, here and in principalOf: a
		// request does not allocate the rest of each document.
		var k struct {
			OwnerID string `json:"owner_id"`
		}
		if err := json.Unmarshal(key.Doc, &k); err != nil {
			return err
		}
		var owner, restriction, account *store.Object
		for _, o := range with {
			switch {
			case o.ID == k.OwnerID:
				owner = o
			case o.Kind == kinds.IPRestriction: // the holder of the account's api restriction key
				restriction = o
			case o.Kind == kinds.Account:
				account = o
			}
		}
		if err := checkAccountEnabled(account); err != nil {
			return err
		}
		if owner == nil { // a key stored without its owner ref
			who, err = loadPrincipal(c, tx, key.AccountID, k.OwnerID)
		} else {
			who, err = principalOf(key.AccountID, owner)
		}
		who.keyID = key.ID
		if err != nil {
			return err
		}
		verdict, err = c.checkAPIRestriction(tx, restriction)
		return err
	})
	if err != nil {
		return err
	}
	c.who = who
	c.logDryRun(verdict)
	return nil
}

// authorizationHeader returns the request's one Authorization header ("" when absent).
// Proxies and servers disagree on which of two headers counts, so two are refused (ERR_201).
func authorizationHeader(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	if len(values) > 1 {
		return "", apierr.Forbidden("ERR_201", "The request has %d Authorization headers; send exactly one 'Authorization: Bearer <token>'.", len(values))
	}
	return r.Header.Get("Authorization"), nil
}

// loadPrincipal resolves an owner ID (a user or a service user of the account) to a principal.
func loadPrincipal(c *call, tx store.Tx, accountID, ownerID string) (principal, error) {
	kind := kinds.ServiceUser
	if strings.HasPrefix(ownerID, ids.User) {
		kind = kinds.User
	}
	obj, err := tx.Get(c.r.Context(), kind, ownerID)
	if err != nil {
		return principal{}, err
	}
	return principalOf(accountID, obj)
}

// principalOf is the principal of a stored user or service user; an inactive service user
// acts as no one (ERR_203).
func principalOf(accountID string, obj *store.Object) (principal, error) {
	if obj.Kind == kinds.User {
		var u struct {
			ID    string `json:"id"`
			Email string `json:"email"`
			Role  string `json:"role"`
		}
		if err := json.Unmarshal(obj.Doc, &u); err != nil {
			return principal{}, err
		}
		return principal{accountID: accountID, id: u.ID, role: u.Role, subject: u.Email}, nil
	}
	if obj.Kind != kinds.ServiceUser {
		return principal{}, fmt.Errorf("the API key owner %s is a %s", obj.ID, obj.Kind)
	}
	var su struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Active bool   `json:"active"`
	}
	if err := json.Unmarshal(obj.Doc, &su); err != nil {
		return principal{}, err
	}
	if !su.Active {
		return principal{}, apierr.Forbidden("ERR_203", "The API key's owner %s is inactive.", su.ID)
	}
	// Service users act with member rights: they may not manage principals.
	return principal{accountID: accountID, id: su.ID, role: api.RoleMember, subject: su.Name}, nil
}
