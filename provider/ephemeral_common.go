package provider

import (
	"context"
	"encoding/json"

	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
)

// The ephemeral resources create a key when Terraform opens them and delete it when
// Terraform closes them; the ID travels in the private data between the two.

const privateIDKey = "id"

// rememberID stores the ID of the object Open created, for Close.
func rememberID(ctx context.Context, resp *ephemeral.OpenResponse, id string) {
	value, err := json.Marshal(id)
	if err != nil {
		resp.Diagnostics.AddError("Could not remember the ID", err.Error())
		return
	}
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privateIDKey, value)...)
}

// closeByID deletes the object Open created; one already gone is fine.
func closeByID(ctx context.Context, req ephemeral.CloseRequest, resp *ephemeral.CloseResponse, what string, del func(context.Context, string) error) {
	raw, diags := req.Private.GetKey(ctx, privateIDKey)
	resp.Diagnostics.Append(diags...)
	var id string
	if resp.Diagnostics.HasError() || raw == nil || json.Unmarshal(raw, &id) != nil || id == "" {
		return
	}
	if err := apiDelete(ctx, what, id, del); err != nil && !client.IsNotFound(err) {
		addAPIError(ctx, &resp.Diagnostics, nil, "delete "+what+" "+id, err)
	}
}

// Attributes of the ephemeral resources.

func ephemeralInput(description string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: description, Optional: true}
}

func ephemeralOutput(description string, sensitive bool) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: description, Computed: true, Sensitive: sensitive}
}
