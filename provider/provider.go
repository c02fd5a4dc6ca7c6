// Package provider is the Terraform provider for Warren: resources, data sources and
// ephemeral resources that map one to one onto the Warren API's objects.
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
	"github.com/warrenhq/terraform-provider-warren/provider/validators"
)

var (
	_ provider.Provider                       = (*warrenProvider)(nil)
	_ provider.ProviderWithEphemeralResources = (*warrenProvider)(nil)
)

// New returns the provider factory for a build version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &warrenProvider{version: version} }
}

type warrenProvider struct {
	version string
}

type providerModel struct {
	APIURL       types.String `tfsdk:"api_url"`
	APIKey       types.String `tfsdk:"api_key"`
	MaxRetries   types.Int64  `tfsdk:"max_retries"`
	RetryTimeout types.String `tfsdk:"retry_timeout"`
}

func (p *warrenProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "warren"
	resp.Version = p.version
}

func (p *warrenProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages the objects of a Warren account through the Warren API server.",
		Attributes: map[string]schema.Attribute{
			"api_url": schema.StringAttribute{
				MarkdownDescription: "Base URL of the Warren API server, e.g. `https://warren.example.com`. Defaults to the `WARREN_API_URL` environment variable.",
				Optional:            true,
			},
			"api_key": schema.StringAttribute{
				MarkdownDescription: "API key token the provider authenticates with. Defaults to the `WARREN_API_KEY` environment variable. The provider checks it when it is configured (one call listing a single API key), so a key the server refuses fails the plan.",
				Optional:            true,
				Sensitive:           true,
			},
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: "How many times one API request may be retried after the server answers `429 Too Many Requests` or `503 Service Unavailable`, or after the connection breaks before an answer (reads and deletes only: a create or an update may already have happened). `0` turns retries off. When unset, retries are not counted and `retry_timeout` alone ends them. Defaults to the `WARREN_MAX_RETRIES` environment variable.",
				Optional:            true,
				Validators:          []validator.Int64{int64validator.AtLeast(0)},
			},
			"retry_timeout": schema.StringAttribute{
				MarkdownDescription: "How long after its first attempt an API request may still be retried, as a duration such as `30s`, `5m` or `1h`. The provider waits as long as the server's `Retry-After` asks, with random jitter, and gives up early when the next retry would come later than this. Defaults to the `WARREN_RETRY_TIMEOUT` environment variable, else `5m`.",
				Optional:            true,
				Validators:          []validator.String{validators.String("must be a positive duration such as `30s`, `5m` or `1h`", func(v string) error { _, err := parseRetryTimeout(v); return err })},
			},
		},
	}
}

func (p *warrenProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var cfg providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Unknown values (e.g. from resources not yet created) cannot configure a client.
	for name, unknown := range map[string]bool{"api_url": cfg.APIURL.IsUnknown(), "api_key": cfg.APIKey.IsUnknown(), "max_retries": cfg.MaxRetries.IsUnknown(), "retry_timeout": cfg.RetryTimeout.IsUnknown()} {
		if unknown {
			resp.Diagnostics.AddAttributeError(path.Root(name), "Unknown provider setting", "The provider cannot be configured with a value known only after apply: set "+name+" to a known value or use the environment variable.")
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	url := valueOrEnv(cfg.APIURL, "WARREN_API_URL")
	key := valueOrEnv(cfg.APIKey, "WARREN_API_KEY")
	if url == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_url"), "Missing Warren API URL", "Set api_url in the provider block or the WARREN_API_URL environment variable.")
	}
	if key == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing Warren API key", "Set api_key in the provider block or the WARREN_API_KEY environment variable.")
	}
	maxRetries, err := maxRetriesSetting(cfg.MaxRetries)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("max_retries"), "Invalid WARREN_MAX_RETRIES", err.Error())
	}
	var retryTimeout time.Duration
	if v := valueOrEnv(cfg.RetryTimeout, "WARREN_RETRY_TIMEOUT"); v != "" {
		if retryTimeout, err = parseRetryTimeout(v); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("retry_timeout"), "Invalid WARREN_RETRY_TIMEOUT", err.Error())
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c := client.New(client.Config{
		BaseURL: url, APIKey: key, UserAgent: "terraform-provider-warren/" + p.version + " (+" + req.TerraformVersion + ")",
		MaxRetries: maxRetries, RetryTimeout: retryTimeout,
	})
	if err := checkAPIKey(ctx, c); err != nil {
		addKeyCheckError(&resp.Diagnostics, err)
		return
	}
	resp.ResourceData = c
	resp.DataSourceData = c
	resp.EphemeralResourceData = c
}

// checkAPIKey makes one cheap authenticated call (a page of one API key), so that a key the
// server refuses fails the plan here rather than the first create.
func checkAPIKey(ctx context.Context, c *client.Client) error {
	_, err := apiCall(ctx, "list", "api_keys", "", func(ctx context.Context) (struct{}, error) {
		for _, err := range c.APIKeys.Pages(ctx, client.ListOptions{Limit: 1}) {
			return struct{}{}, err
		}
		return struct{}{}, nil
	})
	return err
}

// addKeyCheckError reports a failed key check: a refused key on api_key, else the server
// could not be asked.
func addKeyCheckError(diags *diag.Diagnostics, err error) {
	var apiErr *client.Error
	if errors.As(err, &apiErr) && (apiErr.HTTPStatus == http.StatusUnauthorized || apiErr.HTTPStatus == http.StatusForbidden) {
		diags.AddAttributeError(path.Root("api_key"), "Warren API key refused",
			"The Warren API server refused the provider's API key (api_key or WARREN_API_KEY): "+err.Error())
		return
	}
	diags.AddError("Could not check the Warren API key", "The provider checks its API key with one call to the Warren API server (api_url or WARREN_API_URL), which failed: "+err.Error())
}

func valueOrEnv(v types.String, env string) string {
	if !v.IsNull() && v.ValueString() != "" {
		return v.ValueString()
	}
	return os.Getenv(env)
}

// maxRetriesSetting reads max_retries, else WARREN_MAX_RETRIES, as client.Config.MaxRetries:
// unset is 0 (no count, the timeout bounds retries), a setting of 0 is -1 (no retries).
func maxRetriesSetting(v types.Int64) (int, error) {
	n := v.ValueInt64()
	if v.IsNull() {
		env := os.Getenv("WARREN_MAX_RETRIES")
		if env == "" {
			return 0, nil
		}
		var err error
		if n, err = strconv.ParseInt(env, 10, 32); err != nil || n < 0 {
			return 0, fmt.Errorf("WARREN_MAX_RETRIES is %q: it must be a whole number, 0 or more", env)
		}
	}
	if n == 0 {
		return -1, nil
	}
	return int(min(n, 1<<31-1)), nil
}

// parseRetryTimeout reads a retry_timeout: a Go duration above zero.
func parseRetryTimeout(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 30s, 5m or 1h", v)
	}
	return d, nil
}

func (p *warrenProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewAPIKeyResource,
		NewTunnelCredentialResource,
		NewSSHCredentialResource,
		NewSSHCertificateAuthorityResource,
		NewServiceUserResource,
		NewTLSCertificateResource,
		NewCertificateAuthorityResource,
		NewReservedDomainResource,
		NewReservedAddrResource,
		NewIPPolicyResource,
		NewIPPolicyRuleResource,
		NewIPRestrictionResource,
		NewFailoverBackendResource,
		NewHTTPResponseBackendResource,
		NewStaticBackendResource,
		NewTunnelGroupBackendResource,
		NewWeightedBackendResource,
		NewHTTPSEdgeResource,
		NewHTTPSEdgeRouteResource,
		NewTCPEdgeResource,
		NewTLSEdgeResource,
		NewEventDestinationResource,
		NewEventSubscriptionResource,
		NewOrchestratorOperatorResource,
	}
}

func (p *warrenProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		apiKeyDataSources.object, apiKeyDataSources.all,
		tunnelCredentialDataSources.object, tunnelCredentialDataSources.all,
		sshCredentialDataSources.object, sshCredentialDataSources.all,
		sshCertificateAuthorityDataSources.object, sshCertificateAuthorityDataSources.all,
		serviceUserDataSources.object, serviceUserDataSources.all,
		tlsCertificateDataSources.object, tlsCertificateDataSources.all,
		certificateAuthorityDataSources.object, certificateAuthorityDataSources.all,
		reservedDomainDataSources.object, reservedDomainDataSources.all,
		reservedAddrDataSources.object, reservedAddrDataSources.all,
		ipPolicyDataSources.object, ipPolicyDataSources.all,
		ipPolicyRuleDataSources.object, ipPolicyRuleDataSources.all,
		ipRestrictionDataSources.object, ipRestrictionDataSources.all,
		failoverBackendDataSources.object, failoverBackendDataSources.all,
		httpResponseBackendDataSources.object, httpResponseBackendDataSources.all,
		staticBackendDataSources.object, staticBackendDataSources.all,
		tunnelGroupBackendDataSources.object, tunnelGroupBackendDataSources.all,
		weightedBackendDataSources.object, weightedBackendDataSources.all,
		httpsEdgeDataSources.object, httpsEdgeDataSources.all,
		httpsEdgeRouteDataSource,
		tcpEdgeDataSources.object, tcpEdgeDataSources.all,
		tlsEdgeDataSources.object, tlsEdgeDataSources.all,
		eventDestinationDataSources.object, eventDestinationDataSources.all,
		eventSubscriptionDataSources.object, eventSubscriptionDataSources.all,
		orchestratorOperatorDataSources.object, orchestratorOperatorDataSources.all,
		tunnelSessionDataSources.object, tunnelSessionDataSources.all,
		tunnelDataSources.object, tunnelDataSources.all,
		endpointDataSources.object, endpointDataSources.all,
	}
}

func (p *warrenProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		NewAPIKeyEphemeralResource,
		NewTunnelCredentialEphemeralResource,
	}
}
