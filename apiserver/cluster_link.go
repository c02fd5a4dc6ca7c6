package apiserver

import (
	"errors"
	"net"

	"github.com/warrenhq/terraform-provider-warren/apiserver/cluster"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store/sealing"
)

// clusterLink is this replica's end of the cluster link: the client that opens streams to
// other replicas' tunnels and the server that opens theirs to this replica's.
type clusterLink struct {
	client *cluster.Client
	server *cluster.Server
}

// newClusterLink builds the link of a replica with Options.Agents.Link, keyed from st's
// secret keys (st, not yet wrapped, shows them); nil without a link.
func newClusterLink(s *Server, st store.Store) (*clusterLink, error) {
	if s.opts.Agents.Link == "" {
		return nil, nil
	}
	k, ok := st.(interface{ Keys() *sealing.Keyring })
	if !ok || k.Keys() == nil {
		return nil, errors.New("the cluster link needs the secret key (--secret-key)")
	}
	keys, err := cluster.KeysFor(k.Keys())
	if err != nil {
		return nil, err
	}
	return &clusterLink{
		client: &cluster.Client{Keys: keys},
		server: &cluster.Server{Keys: keys, Log: s.log.Named("cluster")},
	}, nil
}

// ServeCluster answers the other replicas' links on ln, opening their streams to this
// replica's tunnels only, until ln is closed; Close ends the links it serves. The server
// needs Options.Agents.Link, the address at which the others reach ln.
func (s *Server) ServeCluster(ln net.Listener) error {
	if s.link == nil {
		return errors.New("apiserver: ServeCluster without Options.Agents.Link")
	}
	return s.link.server.Serve(ln)
}
