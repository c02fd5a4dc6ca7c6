// Command peer is a Terraform provider (registry.terraform.io/ngrok/ngrok) of the same shape
// as ngrok's terraform-provider-ngrok at commit 956bb08, reduced to its ngrok_ip_policy
// resource: the SDKv2, a client on http.DefaultClient, create as POST then GET (ngrok's
// generated resources read the object back after every write), read as GET, delete as DELETE.
// make bench drives it against Warren beside warren_ip_policy, as the speed to beat.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/hashicorp/terraform-plugin-sdk/v2/helper/schema"
	"github.com/hashicorp/terraform-plugin-sdk/v2/plugin"
)

func main() {
	plugin.Serve(&plugin.ServeOpts{ProviderFunc: provider})
}

func provider() *schema.Provider {
	return &schema.Provider{
		Schema: map[string]*schema.Schema{
			"api_key": {
				Type:        schema.TypeString,
				DefaultFunc: schema.EnvDefaultFunc("NGROK_API_KEY", ""),
				Description: "API key used for authenticating to the API",
				Required:    true,
			},
			"api_base_url": {
				Type:        schema.TypeString,
				DefaultFunc: schema.EnvDefaultFunc("NGROK_API_BASE_URL", ""),
				Description: "base URL of the API",
				Optional:    true,
			},
		},
		ResourcesMap: map[string]*schema.Resource{"ngrok_ip_policy": ipPolicyResource()},
		ConfigureFunc: func(d *schema.ResourceData) (any, error) {
			return &apiClient{
				http: http.DefaultClient, // as ngrok's restapi.NewClient without an HTTPClient
				base: strings.TrimRight(d.Get("api_base_url").(string), "/"),
				key:  d.Get("api_key").(string),
			}, nil
		},
	}
}

func ipPolicyResource() *schema.Resource {
	return &schema.Resource{
		Create: ipPolicyCreate,
		Read:   ipPolicyRead,
		Update: ipPolicyUpdate,
		Delete: ipPolicyDelete,
		Schema: map[string]*schema.Schema{
			"action":      {Type: schema.TypeString, Optional: true, ForceNew: true, Description: "deprecated"},
			"description": {Type: schema.TypeString, Optional: true, Description: "human-readable description of the source IPs of this IP policy. optional, max 255 bytes."},
			"id":          {Type: schema.TypeString, Computed: true, Description: "unique identifier for this IP policy"},
			"metadata":    {Type: schema.TypeString, Optional: true, Description: "arbitrary user-defined machine-readable data of this IP policy. optional, max 4096 bytes."},
		},
	}
}

type ipPolicy struct {
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	Metadata    string `json:"metadata,omitempty"`
}

func ipPolicyCreate(d *schema.ResourceData, m any) error {
	c := m.(*apiClient)
	var res ipPolicy
	arg := ipPolicy{Description: d.Get("description").(string), Metadata: d.Get("metadata").(string)}
	if _, err := c.do("POST", "/ip_policies", arg, &res); err != nil {
		return err
	}
	d.SetId(res.ID)
	return ipPolicyRead(d, m)
}

func ipPolicyRead(d *schema.ResourceData, m any) error {
	c := m.(*apiClient)
	var res ipPolicy
	status, err := c.do("GET", "/ip_policies/"+d.Id(), nil, &res)
	switch {
	case status == http.StatusNotFound:
		d.SetId("")
		return nil
	case err != nil:
		return err
	}
	d.Set("description", res.Description)
	d.Set("id", res.ID)
	d.Set("metadata", res.Metadata)
	return nil
}

func ipPolicyUpdate(d *schema.ResourceData, m any) error {
	c := m.(*apiClient)
	arg := map[string]string{"description": d.Get("description").(string), "metadata": d.Get("metadata").(string)}
	if _, err := c.do("PATCH", "/ip_policies/"+d.Id(), arg, nil); err != nil {
		return err
	}
	return ipPolicyRead(d, m)
}

func ipPolicyDelete(d *schema.ResourceData, m any) error {
	_, err := m.(*apiClient).do("DELETE", "/ip_policies/"+d.Id(), nil, nil)
	return err
}

type apiClient struct {
	http      *http.Client
	base, key string
}

// do sends one request and decodes a 2xx answer into out; it returns the status.
func (c *apiClient) do(method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("User-Agent", "ngrok-api-client/0")
	req.Header.Set("Service-Version", "2")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil && len(data) > 0 {
		return resp.StatusCode, json.Unmarshal(data, out)
	}
	return resp.StatusCode, nil
}
