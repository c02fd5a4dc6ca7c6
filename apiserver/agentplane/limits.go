package agentplane

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"go.uber.org/zap"
)

// The agent plane's limits (Options): how many sessions a tunnel credential, and an
// account, may start per minute and hold at once. Both are refused before the upgrade, with
// the API's 429 and error body, so a flood costs a read and no write:
//
//   - the rate is a token bucket per credential and per account on the API limiter's
//     machinery (Host.Limiter: shared through the store by the replicas of a PostgreSQL
//     database), taken from the credential's first, so that one credential's flood does not
//     spend its account's allowance;
//   - the sessions held are counted from the stored session rows, which every replica sees,
//     in the read that authenticates the credential, and again in the transaction that
//     stores the session (serializable on PostgreSQL, one writer on SQLite), where two
//     agents that passed the first count together are told apart: the loser gets ERR_225 in
//     answer to its Hello.
type sessionLimits struct {
	credentialRate, accountRate limit // nil Limiter: no rate limit
	credentialMax, accountMax   int   // 0: no cap
}

// limit is a rate of new sessions: its limiter and per-minute allowance (for the message).
type limit struct {
	Limiter
	perMinute int
}

func newSessionLimits(o Options, limiter func(scope string, perMinute int) Limiter) sessionLimits {
	var l sessionLimits
	if o.CredentialSessionRate > 0 {
		l.credentialRate = limit{limiter("agent_sessions:", o.CredentialSessionRate), o.CredentialSessionRate}
	}
	if o.AccountSessionRate > 0 {
		l.accountRate = limit{limiter("agent_sessions:", o.AccountSessionRate), o.AccountSessionRate}
	}
	l.credentialMax, l.accountMax = max(o.CredentialSessions, 0), max(o.AccountSessions, 0)
	return l
}

// retryAfterHeader is the header of a refusal's wait, in whole seconds.
const retryAfterHeader = "Retry-After"

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// takeSessionRate takes one new session from the allowances of cred and of its account, or
// refuses it with 429 ERR_226 and Retry-After. The bucket keys are the IDs, whose prefixes
// keep credentials and accounts apart.
func (h *Plane) takeSessionRate(ctx context.Context, w http.ResponseWriter, log *zap.Logger, cred *store.Object) error {
	l := h.limits
	for _, lim := range []struct {
		rate      limit
		key, what string
	}{{l.credentialRate, cred.ID, "tunnel credential"}, {l.accountRate, cred.AccountID, "account"}} {
		if lim.rate.Limiter == nil {
			continue
		}
		allowed, retryAfter, err := lim.rate.Allow(ctx, lim.key, h.host.Now())
		if err != nil {
			h.logStoreError(log, "agent session rate: taking from the allowance failed; the session passes", err)
		}
		if allowed {
			continue
		}
		secs := ceilSeconds(retryAfter)
		w.Header().Set(retryAfterHeader, strconv.Itoa(secs))
		return apierr.New(http.StatusTooManyRequests, agentproto.ErrSessionRate, "Too many new agent sessions: at most %d per 60 seconds per %s. Retry in %d seconds.", lim.rate.perMinute, lim.what, secs)
	}
	return nil
}

// checkHeldSessions refuses a new session of cred with 429 ERR_225 while the credential or
// its account holds as many sessions as it may.
func (h *Plane) checkHeldSessions(ctx context.Context, tx store.Tx, cred *store.Object) error {
	l := h.limits
	for _, lim := range []struct {
		max   int
		count func() (int, error)
		what  string
	}{
		{l.credentialMax, func() (int, error) { return tx.CountReferrers(ctx, cred.ID, kinds.TunnelSession) }, "tunnel credential"},
		{l.accountMax, func() (int, error) { return tx.Count(ctx, kinds.TunnelSession, cred.AccountID) }, "account"},
	} {
		if lim.max == 0 {
			continue
		}
		n, err := lim.count()
		if err != nil {
			return err
		}
		if n >= lim.max {
			return apierr.New(http.StatusTooManyRequests, agentproto.ErrTooManySessions, "Too many agent sessions: the %s holds %d, the most it may hold at once. Retry when one has ended.", lim.what, n)
		}
	}
	return nil
}

// heldSessionsRetryAfter answers a refusal of checkHeldSessions at the handshake with
// Retry-After: a heartbeat interval, since the sessions of agents that vanished end within
// three and the agent backs off further on its own.
func (h *Plane) heldSessionsRetryAfter(w http.ResponseWriter, err error) {
	var ae *api.Error
	if errors.As(err, &ae) && ae.ErrorCode == agentproto.ErrTooManySessions {
		w.Header().Set(retryAfterHeader, strconv.Itoa(ceilSeconds(h.opts.Heartbeat)))
	}
}
