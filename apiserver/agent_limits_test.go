package apiserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
)

// attempt is one agent's try to open a session: the handshake's HTTP answer when the
// server refused the upgrade, else the answer to its Hello on ws.
type attempt struct {
	status     int // 101 when upgraded
	errorCode  string
	msg        string
	retryAfter string
	welcome    agentproto.Message
	ws         *websocket.Conn
	ctl        *agentproto.ControlConn // the control stream of an upgraded one
}

// dialAgent opens the WebSocket with token; hello (on an upgraded one) says Hello and reads
// the answer.
func dialAgent(t *testing.T, base, token string) *attempt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a hang guard
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, agentURL(base), &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{agentproto.SubprotocolV2},
	})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		var body api.Error
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return &attempt{status: resp.StatusCode, errorCode: body.ErrorCode, msg: body.Msg, retryAfter: resp.Header.Get("Retry-After")}
	}
	t.Cleanup(func() { ws.CloseNow() })
	mux, err := agentproto.NewAgentMux(context.Background(), ws, agentproto.MuxOptions{Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mux.Close() })
	ctl, err := mux.OpenControl()
	if err != nil {
		t.Fatal(err)
	}
	return &attempt{status: http.StatusSwitchingProtocols, ws: ws, ctl: ctl}
}

func (a *attempt) hello(t *testing.T) *attempt {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a hang guard
	defer cancel()
	if err := a.ctl.Write(ctx, agentproto.Message{Type: agentproto.TypeHello, ID: "hello", AgentVersion: "1"}); err != nil {
		t.Fatalf("hello: %v", err)
	}
	m, err := a.ctl.Read(ctx)
	if err != nil {
		t.Fatalf("reading the answer to hello: %v", err)
	}
	a.welcome, a.errorCode, a.msg = m, m.ErrorCode, m.Error
	return a
}

// connect is dial and hello, which must succeed.
func connect(t *testing.T, base, token string) *attempt {
	t.Helper()
	a := dialAgent(t, base, token)
	if a.status != http.StatusSwitchingProtocols {
		t.Fatalf("connect: %d %s %s", a.status, a.errorCode, a.msg)
	}
	if a.hello(t); a.welcome.Type != agentproto.TypeWelcome {
		t.Fatalf("connect: %+v", a.welcome)
	}
	return a
}

// refused checks that a connection was refused before the upgrade with 429, code, a message
// naming what, and Retry-After retryAfter.
func (a *attempt) refused(t *testing.T, code, what, retryAfter string) {
	t.Helper()
	if a.status != http.StatusTooManyRequests || a.errorCode != code || !strings.Contains(a.msg, what) || a.retryAfter != retryAfter {
		t.Fatalf("got %d %s %q Retry-After %q, want 429 %s about the %s, Retry-After %s", a.status, a.errorCode, a.msg, a.retryAfter, code, what, retryAfter)
	}
}

// TestAgentSessionLimits: new sessions per minute and sessions held at once, per credential
// and per account, are refused before the upgrade with 429 and the API's error body (the
// rate ERR_226, the sessions held ERR_225), each with Retry-After; two agents that passed
// the first count together are told apart when their sessions start.
func TestAgentSessionLimits(t *testing.T) {
	clk := apiservertest.NewClock(time.Now())
	onEachDatabase(t, func(t *testing.T, c *tc) {
		clk.Add(time.Hour) // every run starts with full buckets
		_, tokA := c.credential()
		_, tokB := c.credential()
		a1 := connect(t, c.srv.URL, tokA)
		connect(t, c.srv.URL, tokA)
		// The credential holds its 2: refused, without spending its rate.
		dialAgent(t, c.srv.URL, tokA).refused(t, "ERR_225", "tunnel credential holds 2", "10")
		connect(t, c.srv.URL, tokB)
		// The account holds its 3.
		dialAgent(t, c.srv.URL, tokB).refused(t, "ERR_225", "account holds 3", "10")
		equal(t, "sessions held", len(c.listIDs("/tunnel_sessions")), 3)

		// A session ending frees a place: the credential's third and last new session this
		// minute (3 per minute: one more every 20 s).
		_ = a1.ws.Close(websocket.StatusNormalClosure, "")
		apiservertest.WaitUntil(t, "the session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 2 })
		a3 := connect(t, c.srv.URL, tokA)
		_ = a3.ws.Close(websocket.StatusNormalClosure, "")
		apiservertest.WaitUntil(t, "the session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 2 })
		dialAgent(t, c.srv.URL, tokA).refused(t, "ERR_226", "at most 3 per 60 seconds per tunnel credential", "20")
		// The account's fifth session this minute (a1, a2, b1, a3, b2), then its own rate.
		b2 := connect(t, c.srv.URL, tokB)
		_ = b2.ws.Close(websocket.StatusNormalClosure, "")
		apiservertest.WaitUntil(t, "the session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 2 })
		dialAgent(t, c.srv.URL, tokB).refused(t, "ERR_226", "at most 5 per 60 seconds per account", "12")
		// 20 s later both have regained a session.
		clk.Add(20 * time.Second)
		connect(t, c.srv.URL, tokA)

		// Two agents upgraded while the credential held 1 of its 2 (the count before the
		// upgrade let both in): the first Hello takes the place, the second is refused with
		// ERR_225 and the socket closed.
		other := c.as(c.srv.NewAccount(t)) // an account with room
		_, tokC := other.credential()
		connect(t, c.srv.URL, tokC)
		x, y := dialAgent(t, c.srv.URL, tokC), dialAgent(t, c.srv.URL, tokC)
		equal(t, "both upgraded", []int{x.status, y.status}, []int{101, 101})
		equal(t, "first hello", x.hello(t).welcome.Type, agentproto.TypeWelcome)
		y.hello(t)
		equal(t, "second hello", []string{y.welcome.Type, y.errorCode}, []string{agentproto.TypeError, "ERR_225"})
		if _, err := y.ctl.Read(context.Background()); err == nil {
			t.Fatal("the socket of the refused hello is still open")
		}
		equal(t, "the other account's sessions", len(other.listIDs("/tunnel_sessions")), 2)
	}, func(o *apiserver.Options) {
		o.Now = clk.Now
		o.Agents.CredentialSessionRate, o.Agents.AccountSessionRate = 3, 5
		o.Agents.CredentialSessions, o.Agents.AccountSessions = 2, 3
	})
}

// TestAgentSessionEventsOnlyWhenSubscribed: the agent session events are written only when
// a subscription of the account names their type, and then with their delivery.
func TestAgentSessionEventsOnlyWhenSubscribed(t *testing.T) {
	c := newTC(t, noDelivery)
	_, token := c.credential()
	sessionEvents := func() (types []string) {
		for _, e := range c.events() {
			if typ := str(e["event_type"]); strings.HasPrefix(typ, "agent_session_") {
				types = append(types, typ)
			}
		}
		return types
	}
	connectAndLeave := func() {
		a := connect(t, c.srv.URL, token)
		_ = a.ws.Close(websocket.StatusNormalClosure, "")
		apiservertest.WaitUntil(t, "the session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 0 })
	}
	connectAndLeave()
	equal(t, "events without a subscription", sessionEvents(), []string(nil))

	d := c.ok(201, "POST", "/event_destinations", map[string]any{"format": "JSON", "target": dataStream(creds(awsSecret))})
	c.ok(201, "POST", "/event_subscriptions", map[string]any{"sources": []any{map[string]any{"type": "agent_session_start.v0"}}, "destination_ids": []any{d["id"]}})
	connectAndLeave()
	evs := sessionEvents()
	equal(t, "events with a subscription to the start", evs, []string{"agent_session_start.v0"})
	deliveries := c.as(c.srv.AdminToken).ok(200, "GET", "/_admin/deliveries?destination_id="+str(d["id"]), nil)["deliveries"].([]any)
	equal(t, "deliveries", len(deliveries), 1)
	equal(t, "delivery state", deliveries[0].(map[string]any)["state"], "pending")
}

// TestAgentSessionFlood: one credential opens sessions as fast as several goroutines can
// for a while. The sessions accepted stay within the bucket (its size, plus its rate over
// the time elapsed); every refusal is 429 ERR_226 with Retry-After before the upgrade and
// costs no write transaction; no event is written (no subscription). Agents that stay
// connected never hold more than the cap. The API's latency is logged, idle and under the
// flood, not asserted (tests make no timed assertions); the work the flood causes is.
func TestAgentSessionFlood(t *testing.T) {
	const perMinute, held, workers = 20, 5, 8
	t.Run("rate", func(t *testing.T) {
		c := newTC(t, noDelivery, func(o *apiserver.Options) {
			o.Agents.Heartbeat = time.Minute // no lease renewal in the counts below
			o.Agents.CredentialSessionRate = perMinute
		})
		_, token := c.credential()
		writes := func() uint64 {
			return series(scrape(t, c), "warren_store_transaction_duration_seconds", "op", "write").GetHistogram().GetSampleCount()
		}
		eventsBefore := len(c.events())
		idle := c.p50(40, "/credentials")
		writesBefore := writes()

		var accepted, refused atomic.Int64
		var wrong sync.Map // unexpected answers, for the failure message
		start := time.Now()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					a := dialAgent(t, c.srv.URL, token)
					switch {
					case a.status == http.StatusSwitchingProtocols && a.hello(t).welcome.Type == agentproto.TypeWelcome:
						accepted.Add(1)
						_ = a.ws.Close(websocket.StatusNormalClosure, "")
					case a.status == http.StatusTooManyRequests && a.errorCode == "ERR_226" && a.retryAfter != "":
						refused.Add(1)
					default:
						wrong.Store(strconv.Itoa(a.status)+" "+a.errorCode+" "+a.msg+" "+a.welcome.Type, true)
					}
				}
			})
		}
		busy := c.p50(40, "/credentials")
		// The flood lasts at least a second, and until it was refused 200 times (10 s bound a
		// server that refuses nothing).
		for time.Since(start) < time.Second || refused.Load() < 200 && time.Since(start) < 10*time.Second {
			time.Sleep(10 * time.Millisecond)
		}
		close(stop)
		wg.Wait()
		elapsed := time.Since(start)
		wrong.Range(func(k, _ any) bool { t.Errorf("unexpected answer: %s", k); return true })

		limit := perMinute + int64(elapsed*perMinute/time.Minute) + 1
		t.Logf("%s: %d sessions accepted (at most %d), %d refused; p50 of GET /credentials idle %s, under the flood %s",
			elapsed.Round(time.Millisecond), accepted.Load(), limit, refused.Load(), idle, busy)
		if n := accepted.Load(); n < perMinute || n > limit {
			t.Errorf("%d sessions accepted in %s, want the burst of %d and at most %d", n, elapsed, perMinute, limit)
		}
		apiservertest.WaitUntil(t, "every session is gone", func() bool { return len(c.listIDs("/tunnel_sessions")) == 0 })
		// Each accepted session is two write transactions (start, end); a refusal none.
		if w := writes() - writesBefore; w != uint64(2*accepted.Load()) {
			t.Errorf("%d write transactions for %d sessions and %d refusals, want %d", w, accepted.Load(), refused.Load(), 2*accepted.Load())
		}
		equal(t, "events written", len(c.events()), eventsBefore)
	})

	// Agents that stay: never more than the cap at once, the others refused with ERR_225
	// at the handshake, or in answer to the Hello when they passed the count together.
	t.Run("held", func(t *testing.T) {
		c := newTC(t, noDelivery, func(o *apiserver.Options) { o.Agents.CredentialSessions = held })
		_, token := c.credential()
		var mu sync.Mutex
		var kept int
		var codes []string
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range 4 {
					a := dialAgent(t, c.srv.URL, token)
					if a.status == http.StatusSwitchingProtocols {
						a.hello(t)
					}
					mu.Lock()
					if a.welcome.Type == agentproto.TypeWelcome {
						kept++
					} else {
						codes = append(codes, a.errorCode)
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		equal(t, "sessions kept", kept, held)
		equal(t, "sessions listed", len(c.listIDs("/tunnel_sessions")), held)
		slices.Sort(codes)
		equal(t, "refusals", slices.Compact(codes), []string{"ERR_225"})
	})
}

// p50 is the median time of n GET requests to path.
func (c *tc) p50(n int, path string) time.Duration {
	c.t.Helper()
	took := make([]time.Duration, n)
	for i := range took {
		start := time.Now()
		c.ok(200, "GET", path, nil)
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	return took[n/2]
}
