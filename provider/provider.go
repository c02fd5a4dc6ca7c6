// Package provider is the Terraform provider for Warren: resources, data sources and
// ephemeral resources that map one to one onto the Warren API's objects.
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/warrenhq/terraform-provider-warren/internal/client"
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
	APIURL types.String `tfsdk:"api_url"`
	APIKey types.String `tfsdk:"api_key"`
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
				MarkdownDescription: "API key token the provider authenticates with. Defaults to the `WARREN_API_KEY` environment variable.",
				Optional:            true,
				Sensitive:           true,
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
	for name, v := range map[string]types.String{"api_url": cfg.APIURL, "api_key": cfg.APIKey} {
		if v.IsUnknown() {
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
	if resp.Diagnostics.HasError() {
		return
	}
	c := client.New(client.Config{BaseURL: url, APIKey: key, UserAgent: "terraform-provider-warren/" + p.version + " (+" + req.TerraformVersion + ")"})
	resp.ResourceData = c
	resp.DataSourceData = c
	resp.EphemeralResourceData = c
}

func valueOrEnv(v types.String, env string) string {
	if !v.IsNull() && v.ValueString() != "" {
		return v.ValueString()
	}
	return os.Getenv(env)
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
	}
}

func (p *warrenProvider) EphemeralResources(context.Context) []func() ephemeral.EphemeralResource {
	return []func() ephemeral.EphemeralResource{
		NewAPIKeyEphemeralResource,
		NewTunnelCredentialEphemeralResource,
	}
}
