package provider

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/warrenhq/terraform-provider-warren/apiserver"
	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/postgres/pgcluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sqlstore"
)

// databaseRestart is the time PostgreSQL stays down in TestAccApplySpansDatabaseRestart.
const databaseRestart = 2 * time.Second

// TestAccApplySpansDatabaseRestart applies four resources that depend on each other on a
// server whose PostgreSQL stops right after the first one is committed and starts again
// databaseRestart later: the provider waits out the 503s and the apply succeeds.
func TestAccApplySpansDatabaseRestart(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skip("needs " + resource.EnvTfAcc + "=1")
	}
	cluster := pgcluster.Own(t)
	dsn, err := cluster.NewDatabase()
	if err != nil {
		t.Fatal(err)
	}
	restart := &restartAfterFirst{kind: "ip_policy", down: cluster.Down, up: func() error {
		time.Sleep(databaseRestart)
		return cluster.Up()
	}}
	core, logs := observer.New(zapcore.InfoLevel)
	srv := apiservertest.StartOn(t, func(ctx context.Context, seal sqlstore.Option) (store.Store, error) {
		db, err := postgres.Open(ctx, dsn, seal)
		restart.Store = db
		return restart, err
	}, func(o *apiserver.Options) { o.Logger = zap.New(core) })
	t.Cleanup(func() { _ = restart.wait() }) // before the server and the cluster go
	env := &accEnv{srv: srv, apiKey: srv.APIKey}

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: env.config(`
resource "warren_ip_policy" "first" {
  description = "first"
}

resource "warren_ip_policy" "second" {
  description = "after ${warren_ip_policy.first.id}"
}

resource "warren_ip_policy_rule" "rule" {
  ip_policy_id = warren_ip_policy.second.id
  cidr         = "10.0.0.0/8"
  action       = "allow"
}

resource "warren_ip_policy" "third" {
  description = "after ${warren_ip_policy_rule.rule.id}"
}`),
			Check: func(*terraform.State) error {
				if err := restart.wait(); err != nil {
					return fmt.Errorf("restarting PostgreSQL: %w", err)
				}
				if n := logs.FilterMessageSnippet("store unavailable").Len(); n != 1 {
					return fmt.Errorf("%d outage lines in the log, want 1: the apply did not meet the restart", n)
				}
				back := logs.FilterMessage("store available again").AllUntimed()
				if len(back) != 1 || back[0].ContextMap()["refused_requests"].(int64) == 0 {
					return fmt.Errorf("recovery lines %v: want one, after refused requests", back)
				}
				return nil
			},
		}},
	})
}

// restartAfterFirst is a store that stops its database once, right after the first write
// that stored an object of kind commits, before that request is answered; up then starts it
// again in the background.
type restartAfterFirst struct {
	store.Store
	kind     string
	down, up func() error

	once sync.Once
	done sync.WaitGroup
	err  error
}

func (s *restartAfterFirst) Write(ctx context.Context, fn func(store.Tx) error) error {
	var inserted bool
	err := s.Store.Write(ctx, func(tx store.Tx) error {
		inserted = false
		return fn(insertSpy{Tx: tx, kind: s.kind, seen: &inserted})
	})
	if err == nil && inserted {
		s.once.Do(func() {
			if s.err = s.down(); s.err != nil {
				return
			}
			s.done.Add(1)
			go func() {
				defer s.done.Done()
				s.err = s.up()
			}()
		})
	}
	return err
}

// wait returns once the restart is over, with its error.
func (s *restartAfterFirst) wait() error {
	s.done.Wait()
	return s.err
}

// insertSpy notes an insert of an object of kind.
type insertSpy struct {
	store.Tx
	kind string
	seen *bool
}

func (t insertSpy) Insert(ctx context.Context, o *store.Object) error {
	if o.Kind == t.kind {
		*t.seen = true
	}
	return t.Tx.Insert(ctx, o)
}
