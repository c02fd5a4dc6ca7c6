package apiserver

import (
	"context"
	"encoding/json"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
	"net/http"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// The agent plane (apiserver/agentplane) lives in a package of its own; this file is all it
// gets from the API server: its store, authentication of tunnel credentials, session events,
// the store's outage, rate limiters and the API's error answers. The route table mounts its
// handler at GET /agent/connect behind the API's middleware (operation ID, access log).

// Store kinds of the agent plane, as the API's views name them.
const (
	kindTunnelSession = kinds.TunnelSession
	kindTunnel        = kinds.Tunnel
	kindEndpoint      = kinds.Endpoint
	kindAgentReplica  = kinds.AgentReplica
)

// newAgentPlane starts the agent plane of s.
func newAgentPlane(ctx context.Context, s *Server, shared store.RateBuckets) (*agentplane.Plane, error) {
	return agentplane.New(ctx, s.opts.Agents, agentplane.Host{
		Store:      s.opts.Store,
		Log:        s.log,
		Now:        s.opts.Now,
		Credential: s.agentCredential,
		AccountEnabled: func(ctx context.Context, tx store.Tx, accountID string) error {
			return accountEnabled(ctx, tx, accountID)
		},
		ClientIP:   func(r *http.Request) string { return clientIP(r, s.opts.TrustedProxies).String() },
		RequestLog: func(r *http.Request) *zap.Logger { return callOf(r).log },
		WriteError: func(_ http.ResponseWriter, r *http.Request, err error) { callOf(r).writeError(err) },
		SessionEvent: func(ctx context.Context, tx store.Tx, accountID, eventType string, sess api.TunnelSession) error {
			return s.events.AddIfSubscribed(ctx, tx, accountID, eventType, s.renderSession(sess))
		},
		StoreDown: func(err error) bool { return s.outage.report(err, false) },
		Metrics:   s.metrics.registry,
		Limiter: func(scope string, perMinute int) agentplane.Limiter {
			return planeLimiter{limiterOn(scope, perMinute, shared)}
		},
	})
}

// planeLimiter is the API's rate limiter as the agent plane takes it.
type planeLimiter struct{ l *rateLimiter }

func (p planeLimiter) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	d := p.l.allow(ctx, key, now)
	return d.allowed, d.retryAfter, d.err
}

// agentCredential resolves the Authorization header of an agent to its tunnel credential,
// in tx, with the 403 codes of the API (details.md §5.3), refuses a disabled account
// (ERR_204) and applies the account's IP restriction of type agent.
func (s *Server) agentCredential(ctx context.Context, tx store.Tx, r *http.Request) (*store.Object, error) {
	header, err := authorizationHeader(r)
	if err != nil {
		return nil, err
	}
	if header == "" {
		return nil, apierr.Forbidden("ERR_200", "The Authorization header is missing. Send 'Authorization: Bearer <tunnel credential token>'.")
	}
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, apierr.Forbidden("ERR_201", "The Authorization header could not be parsed; expected 'Bearer <tunnel credential token>'.")
	}
	body, _, ok := ids.SplitToken(token)
	if !ok {
		// Never echoed: a mistyped token is still a secret.
		return nil, apierr.Forbidden("ERR_202", "The credential does not look like a tunnel credential token (FIRSTPART_SECONDPART).")
	}
	o, err := tx.Get(ctx, kinds.Credential, ids.Credential+body)
	if isNotFound(err) {
		return nil, apierr.Forbidden("ERR_203", "The tunnel credential token is not valid: it is unknown or was revoked.")
	}
	if err != nil {
		return nil, err
	}
	var secret kinds.TokenSecret
	if err := json.Unmarshal(o.Secret, &secret); err != nil {
		return nil, err
	}
	if !ids.TokenMatches(token, secret.TokenHash) {
		return nil, apierr.Forbidden("ERR_203", "The tunnel credential token is not valid: it is unknown or was revoked.")
	}
	if err := accountEnabled(ctx, tx, o.AccountID); err != nil {
		return nil, err
	}
	return o, checkAgentRestriction(ctx, tx, r, o.AccountID)
}

// restrictionTypeAgent is the IP restriction type that applies to agents connecting.
const restrictionTypeAgent = "agent"

// checkAgentRestriction applies the account's IP restriction of type agent to an agent
// connecting, as the api one applies to API calls (api_ip_restriction.go): an enforced one
// refuses an address its policies do not allow with 403 ERR_220, before the upgrade; one not
// enforced only logs it.
func checkAgentRestriction(ctx context.Context, tx store.Tx, r *http.Request, accountID string) error {
	obj, err := tx.Lookup(ctx, kinds.IPRestrictionKey(accountID, restrictionTypeAgent))
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	x, err := decodeRestriction(obj)
	if err != nil {
		return err
	}
	ipRules, err := policyRules(ctx, tx, api.RefIDs(x.IPPolicies))
	if err != nil {
		return err
	}
	c := callOf(r)
	if rules.IPAllowed(ipRules, c.clientIP()) {
		return nil
	}
	if x.Enforced {
		return apierr.Forbidden("ERR_220", "The IP address %s is not allowed by the account's agent IP restriction %s.", c.clientIPText(), x.ID)
	}
	c.log.Warn("the agent IP restriction is not enforced; it would block this agent",
		zap.String("account_id", accountID), zap.String("ip_restriction_id", x.ID), zap.String("client_ip", c.clientIPText()))
	return nil
}

// endCredentialSessions deletes the sessions started with a credential that is being
// deleted, in the credential's transaction; their sockets are closed once it commits.
func (c *call) endCredentialSessions(tx store.Tx, credentialID string) error {
	referrers, err := tx.Referrers(c.r.Context(), credentialID)
	if err != nil {
		return err
	}
	for _, o := range referrers {
		if o.Kind != kindTunnelSession {
			continue
		}
		if err := c.s.agents.EndSession(c.r.Context(), tx, o.ID); err != nil {
			return err
		}
		if !slices.Contains(c.endedSessions, o.ID) {
			c.endedSessions = append(c.endedSessions, o.ID)
		}
	}
	return nil
}

// AgentPlane is the server's agent plane: the edge opens its streams to tunnels through it.
func (s *Server) AgentPlane() *agentplane.Plane { return s.agents }
