package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// reservedDomainDataSources are data.warren_reserved_domain and data.warren_reserved_domains.
var reservedDomainDataSources = dataSources[api.ReservedDomain, reservedDomainModel]{
	name:        "reserved_domain",
	plural:      "reserved_domains",
	describeOne: "Reads a reserved domain by `id` or by `domain` (exactly one of them).",
	describeAll: "Lists the account's reserved domains, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `domain`, `region`, `cname_target`, `certificate.id` and `acme_challenge_cname_target`.",
	attributes:  reservedDomainDataAttributes,
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

// reservedAddrDataSources are data.warren_reserved_addr and data.warren_reserved_addrs.
var reservedAddrDataSources = dataSources[api.ReservedAddr, reservedAddrModel]{
	name:        "reserved_addr",
	plural:      "reserved_addrs",
	describeOne: "Reads a reserved TCP address by ID.",
	describeAll: "Lists the account's reserved TCP addresses, optionally narrowed by a CEL filter on `id`, `created_at`, `description`, `metadata`, `addr` and `region`.",
	attributes:  reservedAddrDataAttributes,
	flatten:     flattenReservedAddr,
}

func reservedDomainDataAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"domain":         computedString("The hostname, lowercased without a trailing dot."),
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
