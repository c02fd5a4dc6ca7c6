package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apiservertest"
	"github.com/warrenhq/terraform-provider-warren/apiserver/edge"
)

// TestEdgeListeners: with --edge-http-listen (here from the environment) the command serves
// the edge beside the API: a host nothing serves gets the edge's 404 page.
func TestEdgeListeners(t *testing.T) {
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().String()
	}
	api, edgeAddr := free(), free()
	env := envOf(map[string]string{"WARREN_DATABASE": filepath.Join(t.TempDir(), "w.db"), "WARREN_EDGE_HTTP_LISTEN": edgeAddr})
	done := make(chan int, 1)
	var stderr apiservertest.LockedBuffer
	ctx, stop := context.WithCancel(t.Context())
	go func() { done <- run(ctx, []string{"--listen", api}, env, &apiservertest.LockedBuffer{}, &stderr) }()
	defer func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("exit code %d: %s", code, stderr.String())
		}
	}()
	deadline := time.Now().Add(guard)
	for {
		resp, err := http.Get("http://" + edgeAddr + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 404 || resp.Header.Get("Warren-Error-Code") != "ERR_8001" {
				t.Fatalf("the edge answered %d %s", resp.StatusCode, resp.Header.Get("Warren-Error-Code"))
			}
			break
		}
		select {
		case code := <-done:
			t.Fatalf("the server exited %d: %s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge listener never answered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOAuthFlags: the --oauth-<provider>-* flags (or their environment variables) fill the
// edge's providers; a client ID without its secret, or an endpoint that is not a URL, is
// refused at start.
func TestOAuthFlags(t *testing.T) {
	env := envOf(map[string]string{"WARREN_OAUTH_GITHUB_CLIENT_SECRET": "s"})
	cfg, err := parseFlags([]string{"--oauth-github-client-id", "id", "--oauth-github-api-url", "https://ghe.example.com/api/v3"}, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := cfg.edge.oauthProviders()
	want := map[string]edge.OAuthProvider{"github": {ClientID: "id", ClientSecret: "s", APIURL: "https://ghe.example.com/api/v3"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("providers %+v, want %+v", got, want)
	}
	for _, args := range [][]string{
		{"--oauth-google-client-id", "id"},
		{"--oauth-gitlab-token-url", "gitlab.example.com/oauth/token"},
	} {
		if _, err := parseFlags(args, envOf(nil), io.Discard); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Fatalf("%v: %v", args, err)
		}
	}
}
