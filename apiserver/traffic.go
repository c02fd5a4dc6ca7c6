package apiserver

import (
	"context"
	"net/http"
	"time"

	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/apiserver/traffic"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/ids"
)

// trafficFlushInterval is how often a replica writes the traffic it counted: how late a
// read of GET <edge>/{id}/traffic may be.
const trafficFlushInterval = 10 * time.Second

// trafficOwner is a family whose objects have traffic: the edges and the HTTPS edge routes.
type trafficOwner interface {
	routed
	loadStored(c *call, tx store.Tx) (*store.Object, error)
}

// registerTraffic serves GET <path>/{id}/traffic of the edges and routes: the last hour's
// traffic per minute, every replica's summed (package traffic).
func (s *Server) registerTraffic(mux *router) {
	for _, f := range []trafficOwner{httpsEdges, tcpEdges, tlsEdges, httpsEdgeRoutes} {
		mux.api("GET "+f.collection().def.Path+"/{id}/traffic", op{out: typeOf[api.Traffic]()}, func(c *call) error {
			var out *api.Traffic
			err := c.read(func(tx store.Tx) error {
				o, err := f.loadStored(c, tx)
				if err != nil {
					return err
				}
				edge, route := o.ID, ""
				if o.ParentID != "" {
					edge, route = o.ParentID, o.ID
				}
				out, err = traffic.Read(c.r.Context(), tx, c.who.accountID, edge, route, c.s.opts.Now())
				return err
			})
			if err != nil {
				return err
			}
			return c.writeJSON(http.StatusOK, out)
		})
	}
}

// TrafficRecorder counts the traffic an edge of this process serves, for GET
// <edge>/{id}/traffic (edge.Options.Traffic); the server writes it to the store every 10 s
// and at Close.
func (s *Server) TrafficRecorder() *traffic.Recorder { return s.traffic }

// FlushTraffic writes the traffic counted so far at once, rather than within 10 s.
func (s *Server) FlushTraffic(ctx context.Context) error { return s.traffic.Flush(ctx, s.opts.Store) }

// startTraffic starts writing the recorder's minutes until Close.
func (s *Server) startTraffic() {
	s.traffic = traffic.NewRecorder(ids.New(""), s.opts.Now)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.traffic.Run(ctx, s.opts.Store, trafficFlushInterval, func(err error) {
			s.logStoreError(s.log, "traffic: writing the counted minutes failed; they are written next time", err)
		})
	}()
	s.stopTraffic = func() { cancel(); <-done }
}
