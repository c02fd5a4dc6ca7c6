package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

var (
	_ datasource.DataSourceWithConfigure        = (*reservedDomainDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*reservedDomainDataSource)(nil)
)

// NewReservedDomainDataSource is data.warren_reserved_domain, found by id or by domain.
func NewReservedDomainDataSource() datasource.DataSource { return &reservedDomainDataSource{} }

type reservedDomainDataSource struct {
	client *client.Client
}

func (d *reservedDomainDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_reserved_domain"
}

func (d *reservedDomainDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	attrs := reservedDomainDataAttributes()
	attrs["id"] = schema.StringAttribute{MarkdownDescription: "ID of the reserved domain.", Optional: true, Computed: true}
	attrs["domain"] = schema.StringAttribute{MarkdownDescription: "The hostname (matched after normalising case and a trailing dot).", Optional: true, Computed: true}
	resp.Schema = schema.Schema{MarkdownDescription: "Reads a reserved domain by `id` or by `domain` (exactly one of them).", Attributes: attrs}
}

func (d *reservedDomainDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("domain"))}
}

func (d *reservedDomainDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *reservedDomainDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m reservedDomainModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var found *api.ReservedDomain
	if !m.ID.IsNull() {
		dom, err := d.client.ReservedDomains.Get(ctx, m.ID.ValueString())
		if err != nil {
			addAPIError(&resp.Diagnostics, "read reserved domain "+m.ID.ValueString(), err)
			return
		}
		found = dom
	} else {
		name := rules.NormalizeDomain(m.Domain.ValueString())
		all, err := d.client.ReservedDomains.List(ctx, client.ListOptions{Filter: fmt.Sprintf("obj.domain == %q", name)})
		if err != nil {
			addAPIError(&resp.Diagnostics, "list reserved domains", err)
			return
		}
		if len(all) == 0 {
			resp.Diagnostics.AddAttributeError(path.Root("domain"), "Reserved domain not found", fmt.Sprintf("The account has no reserved domain %q.", name))
			return
		}
		found = &all[0]
	}
	m.Domain = types.StringNull() // report the API's form
	flattenReservedDomain(found, &m)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// NewReservedDomainsDataSource is data.warren_reserved_domains.
func NewReservedDomainsDataSource() datasource.DataSource {
	return &listDataSource[api.ReservedDomain, reservedDomainModel]{
		typeName:    "_reserved_domains",
		member:      "reserved_domains",
		description: "Lists the account's reserved domains, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `domain`, `region`, `cname_target`, `certificate.id` and `acme_challenge_cname_target`.",
		attributes:  withID(withComputed(reservedDomainDataAttributes(), "domain", "The hostname.")),
		list:        func(c *client.Client) listFunc[api.ReservedDomain] { return c.ReservedDomains.List },
		flatten:     flattenReservedDomain,
	}
}

// NewReservedAddrDataSource is data.warren_reserved_addr.
func NewReservedAddrDataSource() datasource.DataSource {
	return &objectDataSource[api.ReservedAddr, reservedAddrModel]{
		typeName:    "_reserved_addr",
		description: "Reads a reserved TCP address by ID.",
		attributes:  reservedAddrDataAttributes(),
		get:         func(c *client.Client) getFunc[api.ReservedAddr] { return c.ReservedAddrs.Get },
		flatten:     flattenReservedAddr,
	}
}

// NewReservedAddrsDataSource is data.warren_reserved_addrs.
func NewReservedAddrsDataSource() datasource.DataSource {
	return &listDataSource[api.ReservedAddr, reservedAddrModel]{
		typeName:    "_reserved_addrs",
		member:      "reserved_addrs",
		description: "Lists the account's reserved TCP addresses, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `addr` and `region`.",
		attributes:  withID(reservedAddrDataAttributes()),
		list:        func(c *client.Client) listFunc[api.ReservedAddr] { return c.ReservedAddrs.List },
		flatten:     flattenReservedAddr,
	}
}

func reservedDomainDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description":    computedString("What the domain is for."),
		"metadata":       computedString("Arbitrary user data."),
		"certificate_id": computedString("ID of the TLS certificate in use, or null."),
		"certificate_management_policy": schema.SingleNestedAttribute{
			MarkdownDescription: "The managed-certificate policy, or null.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"authority":        computedString("Certificate authority."),
				"private_key_type": computedString("Key type of the certificate."),
			},
		},
		"certificate_management_status": schema.SingleNestedAttribute{
			MarkdownDescription: "Status of the managed certificate, or null.",
			Computed:            true,
			Attributes: map[string]schema.Attribute{
				"renews_at": computedString("When the certificate is renewed next."),
				"provisioning_job": schema.SingleNestedAttribute{
					MarkdownDescription: "The current issuance job.",
					Computed:            true,
					Attributes: map[string]schema.Attribute{
						"error_code": computedString("`DNS_ERROR`, `INTERNAL_ERROR` or null."),
						"msg":        computedString("What the job is doing."),
						"started_at": computedString("When the job started."),
						"retries_at": computedString("When a failed job is retried."),
					},
				},
			},
		},
		"cname_target":                computedString("DNS CNAME target, or null for the service's own subdomains."),
		"acme_challenge_cname_target": computedString("CNAME target for `_acme-challenge.<domain>`, or null."),
		"resolves_to":                 computedStringList("Where the domain resolves; null or empty means global."),
		"created_at":                  computedString("When the domain was reserved (RFC 3339)."),
	}
}

func reservedAddrDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"description": computedString("What the address is for."),
		"metadata":    computedString("Arbitrary user data."),
		"region":      computedString("Region of the address."),
		"addr":        computedString("The address, `host:port`."),
		"created_at":  computedString("When the address was reserved (RFC 3339)."),
	}
}

// withComputed adds one computed string attribute.
func withComputed(attributes map[string]schema.Attribute, name, description string) map[string]schema.Attribute {
	attributes[name] = computedString(description)
	return attributes
}
