package client

import (
	"net/url"

	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// BoundEndpoints is the read-only list /orchestrator_operators/{id}/bound_endpoints: the
// endpoints the operator's selectors bind (list it with List, All or Pages).
func (c *Client) BoundEndpoints(operatorID string) *Collection[api.Endpoint, struct{}, struct{}] {
	return &Collection[api.Endpoint, struct{}, struct{}]{c: c, Path: api.OrchestratorOperators.Path + "/" + url.PathEscape(operatorID) + "/bound_endpoints", Member: "endpoints"}
}
