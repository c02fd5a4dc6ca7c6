package main

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/agentplane"
	"github.com/warrenhq/terraform-provider-warren/apiserver/cluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
	"github.com/warrenhq/terraform-provider-warren/internal/agentproto"
)

// TestClusterListen: a server started with --cluster-listen on port 0 advertises the port
// it got, and answers a peer with the secret key (the tunnel asked for is not here) while
// it refuses one without.
func TestClusterListen(t *testing.T) {
	env := databases[1].env(t) // postgres
	env["WARREN_LISTEN"] = "127.0.0.1:0"
	env["WARREN_CLUSTER_LISTEN"] = "127.0.0.1:0"
	_, stderr, stop := serveInBackground(t, nil, env)
	defer stop()
	var link string
	for _, line := range logLines(t, stderr.String()) {
		if line["msg"] == "cluster link listening" {
			link = line["advertised"].(string)
			if line["address"] != link {
				t.Fatalf("advertised %s, listening on %s", link, line["address"])
			}
		}
	}
	if link == "" || strings.HasSuffix(link, ":0") {
		t.Fatalf("advertised link %q: %s", link, stderr.String())
	}
	open := func(secret []byte) error {
		ring, err := sealing.NewKeyring(secret)
		if err != nil {
			t.Fatal(err)
		}
		keys, err := cluster.KeysFor(ring)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err = (&cluster.Client{Keys: keys}).OpenStream(ctx, link, "tn_missing", agentproto.StreamHeader{
			Proto: "tcp", ClientAddr: netip.MustParseAddrPort("203.0.113.7:4000"), Hostport: "1.tcp.example.com:20001",
		})
		return err
	}
	key, err := sealing.ParseKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	var se *agentplane.StreamError
	if err := open(key); !errors.As(err, &se) || !errors.Is(err, agentplane.ErrTunnelOffline) || !strings.Contains(se.Cause.Error(), "replica at "+link) {
		t.Fatalf("with the secret key: %v, want the holder's answer that the tunnel is not there", err)
	}
	if err := open(sealing.GenerateKey()); !errors.As(err, &se) || strings.Contains(se.Cause.Error(), "replica at") {
		t.Fatalf("with another key: %v, want the link refused", err)
	}
}
