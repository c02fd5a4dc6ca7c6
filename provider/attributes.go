package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/warrenhq/terraform-provider-warren/internal/ids"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

// Attributes every object has.

func idAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "ID of the " + what + ".",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

func createdAtAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "When the object was created (RFC 3339).",
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// descriptionAttribute is optional and updates in place. Like every optional string the API
// omits when empty, it is null in state when not set (see emptyAsNull).
func descriptionAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("What the %s is for; at most %d bytes. Null when not set; `\"\"` means the same to the API.", what, rules.MaxDescriptionBytes),
		Optional:            true,
		Validators:          []validator.String{validators.MaxBytes(rules.MaxDescriptionBytes)},
	}
}

func metadataAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: fmt.Sprintf("Arbitrary user data, e.g. JSON; at most %d bytes. Null when not set; `\"\"` means the same to the API.", rules.MaxMetadataBytes),
		Optional:            true,
		Validators:          []validator.String{validators.MaxBytes(rules.MaxMetadataBytes)},
	}
}

// ownerAttribute is the principal that owns a key or credential; it cannot change.
func ownerAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "ID of the user (`usr_…`) or service user (`service_…`) that owns it. Defaults to the owner of the provider's API key; only admins may name another owner. Changing it forces a new object.",
		Optional:            true,
		Computed:            true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()},
		// The API also takes a user's email, but answers with the ID: state would never match.
		Validators: []validator.String{validators.String("must be a user ID (usr_…) or a service user ID (service_…)", func(s string) error {
			if ids.Valid(s, ids.User) || ids.Valid(s, ids.ServiceUser) {
				return nil
			}
			return fmt.Errorf("%q must be a user ID (usr_…) or a service user ID (service_…)", s)
		})},
	}
}

// tokenAttribute is a token the API returns only when it creates the object: kept in state
// from then on, null after an import.
func tokenAttribute(what string) schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "The " + what + " token. The API returns it only when it creates the object, so it is kept in state (sensitive) from then on; it cannot be recovered after an import (it is then null). To keep it out of state, use the ephemeral resource of the same name.",
		Computed:            true,
		Sensitive:           true,
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}
