package apiserver

import (
	"math/rand/v2"
	"net"
	"strconv"

	"github.com/warrenhq/terraform-provider-warren/apiserver/apierr"
	"github.com/warrenhq/terraform-provider-warren/apiserver/filter"
	"github.com/warrenhq/terraform-provider-warren/apiserver/kinds"
	"github.com/warrenhq/terraform-provider-warren/apiserver/store"
	"github.com/warrenhq/terraform-provider-warren/internal/api"
	"github.com/warrenhq/terraform-provider-warren/internal/rules"
)

// reservedAddrs is /reserved_addrs (details.md §6.16): the server assigns each one a
// host:port of its address pool (Options.AddrPool), unique across the server.
var reservedAddrs = &family[api.ReservedAddr, *api.ReservedAddr, api.ReservedAddrCreate, api.ReservedAddrUpdate]{
	kind:            kinds.ReservedAddr,
	def:             api.ReservedAddrs,
	filter:          withFields(textFields, filter.Fields{"addr": filter.String, "region": filter.String}),
	emptyUpdateCode: "ERR_506",
	create: func(c *call, tx store.Tx, in *api.ReservedAddrCreate, a *api.ReservedAddr) (any, error) {
		if err := setText(rules.ReservedAddrText, in.Description, in.Metadata, &a.Description, &a.Metadata); err != nil {
			return nil, err
		}
		a.Region = rules.DefaultAddrRegion
		if region := deref(in.Region); region != "" {
			if err := rules.AddrRegion(region); err != nil {
				return nil, err
			}
			a.Region = region
		}
		var err error
		a.Addr, err = freeAddr(c, tx)
		return nil, err
	},
	update: func(c *call, tx store.Tx, in *api.ReservedAddrUpdate, a *api.ReservedAddr) error {
		return setText(rules.ReservedAddrText, in.Description, in.Metadata, &a.Description, &a.Metadata)
	},
	unique: func(_ string, a *api.ReservedAddr) []string { return []string{kinds.ReservedAddrKey(a.Addr)} },
	// TCP edges will hold their addresses as refs. The catalogue has no code for this case.
	inUse: func(c *call, a *api.ReservedAddr, referrers []*store.Object) error {
		return stillReferenced("ERR_215", "The address "+a.Addr, referrers)
	},
}

// freeAddr picks an address of the pool that no reserved address holds: from a random port
// on, the first free one. The write transaction is serializable, so the address stays free
// until the insert; a concurrent reservation of the same one makes the store retry the
// whole transaction, which then picks another.
func freeAddr(c *call, tx store.Tx) (string, error) {
	pool := c.s.opts.AddrPool
	size := pool.MaxPort - pool.MinPort + 1
	start := rand.IntN(size)
	for i := range size {
		addr := net.JoinHostPort(pool.Host, strconv.Itoa(pool.MinPort+(start+i)%size))
		_, err := tx.Lookup(c.r.Context(), kinds.ReservedAddrKey(addr))
		if isNotFound(err) {
			return addr, nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", apierr.BadRequest("ERR_503", "No available reserved addresses: all %d ports of %s are reserved.", size, pool.Host)
}
