package edge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"github.com/warrenhq/terraform-provider-warren/internal/webhook"
)

// maxWebhookBody bounds the body the webhook_verification module reads into memory to
// check its signature when the edge has no MaxRequestBody: GitHub's largest payload.
const maxWebhookBody = 25 << 20

// webhookVerification is the webhook_verification step: the request's body is read whole,
// its signature checked the way the provider signs (internal/webhook), and the same bytes
// handed on; a request without a valid signature never reaches the upstream.
type webhookVerification struct {
	provider string
	verifier webhook.Verifier // nil: SNS (the edge's, whose certificate cache outlives snapshots) or unsupported
	sns      bool
}

// webhookVerification compiles a route's webhook_verification module; nil when off. Its
// secret is the one the route keeps sealed (kinds.RouteSecret).
func (c *compiler) webhookVerification(doc *api.HTTPSEdgeRoute) (*webhookVerification, error) {
	m := doc.WebhookVerification
	if m == nil || !m.Enabled {
		return nil, nil
	}
	s := &webhookVerification{provider: m.Provider, sns: strings.EqualFold(m.Provider, rules.SecretlessWebhookProvider)}
	if s.sns {
		return s, nil
	}
	var secret kinds.RouteSecret
	if o := c.objs.byID[doc.ID]; o != nil && len(o.Secret) > 0 {
		if err := json.Unmarshal(o.Secret, &secret); err != nil {
			return nil, fmt.Errorf("the route's secrets: %w", err)
		}
	}
	v, err := webhook.New(m.Provider, secret.WebhookSecret, webhook.Options{})
	if errors.Is(err, webhook.ErrUnsupported) {
		return s, nil // refused at serve time, naming the provider
	}
	if err != nil {
		return nil, err
	}
	s.verifier = v
	return s, nil
}

func (s *webhookVerification) serve(w http.ResponseWriter, r *http.Request, x *exchange, next handler) {
	v := s.verifier
	if s.sns {
		v = x.e.sns
	}
	if v == nil {
		x.refuse(w, http.StatusNotImplemented, errWebhookUnsupported, "The route verifies webhooks of %s, whose signatures this server cannot check: its traffic is refused.", s.provider)
		return
	}
	limit := int64(maxWebhookBody)
	if m := x.e.opts.MaxRequestBody; m > 0 {
		limit = m
	}
	var body []byte
	if r.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge) || int64(len(body)) > limit:
			x.refuse(w, http.StatusRequestEntityTooLarge, errWebhookBodyTooLarge, "The request's body is over %d bytes, the most a webhook's signature is checked on.", limit)
			return
		case err != nil:
			x.refuse(w, http.StatusBadRequest, errWebhookSignature, "The request's body could not be read.")
			return
		}
	}
	req := &webhook.Request{Method: r.Method, URL: x.v.scheme + "://" + r.Host + r.URL.RequestURI(), Header: r.Header, Body: body, Now: time.Now()}
	if err := v.Verify(r.Context(), req); err != nil {
		x.e.log.Info("edge: a webhook's signature was refused", zap.String("route_id", x.v.routeID), zap.String("provider", s.provider), zap.Error(err))
		x.refuse(w, http.StatusForbidden, errWebhookSignature, "The request is not signed by %s: %v.", s.provider, err)
		return
	}
	if r.Body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	next(w, r, x)
}
