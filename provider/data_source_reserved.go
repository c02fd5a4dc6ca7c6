package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// NewReservedDomainDataSource is data.warren_reserved_domain, found by id or by domain.
func NewReservedDomainDataSource() datasource.DataSource {
	return &objectDataSource[api.ReservedDomain, reservedDomainModel]{
		typeName:    "_reserved_domain",
		description: "Reads a reserved domain by `id` or by `domain` (exactly one of them).",
		attributes:  withComputed(reservedDomainDataAttributes(), "domain", "The hostname (matched after normalising case and a trailing dot)."),
		get:         func(c *client.Client) getFunc[api.ReservedDomain] { return c.ReservedDomains.Get },
		flatten:     flattenReservedDomain,
		keyName:     "domain",
		find: func(ctx context.Context, c *client.Client, domain string) (*api.ReservedDomain, error) {
			found, err := c.ReservedDomains.List(ctx, client.ListOptions{Filter: fmt.Sprintf("obj.domain == %q", rules.NormalizeDomain(domain))})
			if err != nil || len(found) == 0 {
				return nil, err
			}
			return &found[0], nil
		},
	}
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
