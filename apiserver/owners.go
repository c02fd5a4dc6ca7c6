package apiserver

import (
	"errors"
	"strings"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// textFields are the filterable fields every described family shares (details.md §3.3).
var textFields = filter.Fields{"id": filter.String, "created_at": filter.Timestamp, "description": filter.String, "metadata": filter.String}

// withFields returns base plus extra fields.
func withFields(base filter.Fields, extra filter.Fields) filter.Fields {
	out := filter.Fields{}
	for _, m := range []filter.Fields{base, extra} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// setText validates description and metadata with the family's codes and applies them:
// nil keeps the current value, "" clears it.
func setText(codes rules.TextCodes, description, metadata *string, dstDescription, dstMetadata *string) error {
	if err := rules.DescriptionMetadata(codes, description, metadata); err != nil {
		return err
	}
	if description != nil {
		*dstDescription = *description
	}
	if metadata != nil {
		*dstMetadata = *metadata
	}
	return nil
}

// resolveOwner returns the owner of a new key or credential: the caller when ownerID is not
// given, else the named user (ID or email) or service user of the caller's account. Only
// admins may name someone else (ERR_630).
func (c *call) resolveOwner(tx store.Tx, ownerID *string) (string, error) {
	if ownerID == nil || *ownerID == "" || *ownerID == c.who.id {
		return c.who.id, nil
	}
	ctx := c.r.Context()
	var owner *store.Object
	var err error
	switch {
	case strings.Contains(*ownerID, "@"):
		owner, err = tx.Lookup(ctx, kinds.UserEmailKey(c.who.accountID, *ownerID))
	case strings.HasPrefix(*ownerID, "usr_"):
		owner, err = tx.Get(ctx, kinds.User, *ownerID)
	default:
		owner, err = tx.Get(ctx, kinds.ServiceUser, *ownerID)
	}
	if errors.Is(err, store.ErrNotFound) || (err == nil && owner.AccountID != c.who.accountID) {
		if !c.who.admin() {
			return "", apierr.Forbidden("ERR_630", "Only admins may set an owner other than themselves.")
		}
		return "", apierr.WithDetail(apierr.BadRequest("ERR_634", "No owner could be determined from %s: it is not a user or service user of this account.", rules.Quote(*ownerID)), "param", "owner_id")
	}
	if err != nil {
		return "", err
	}
	if owner.ID != c.who.id && !c.who.admin() {
		return "", apierr.Forbidden("ERR_630", "Only admins may set an owner other than themselves.")
	}
	if owner.Kind == kinds.ServiceUser {
		if _, err := loadPrincipal(c, tx, owner.AccountID, owner.ID); err != nil {
			return "", apierr.WithDetail(apierr.BadRequest("ERR_636", "The owner %s is inactive.", owner.ID), "param", "owner_id")
		}
	}
	return owner.ID, nil
}

// keepOwner rejects a PATCH that names another owner: owners cannot be re-assigned (the
// family's code: ERR_628 keys, ERR_627 credentials, ERR_629 SSH credentials).
func keepOwner(code string, given *string, current string) error {
	if given != nil && *given != "" && *given != current {
		return apierr.WithDetail(apierr.BadRequest(code, "The owner cannot be re-assigned; it is %s.", current), "param", "owner_id")
	}
	return nil
}
