package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Conn is a connection to the Redis that holds researchbot's state.
type Conn struct {
	// Client is the go-redis client of the store, the queue, the leases
	// and the rate limits.
	Client *redis.Client
	// Embedded is true when the Redis runs inside this process and nothing
	// survives the process.
	Embedded bool
	mini     *miniredis.Miniredis
}

// ConnOptions configure a connection. Zero values take the defaults.
type ConnOptions struct {
	// Lease is the run lease (RUN_LEASE, default 15 s): the network
	// timeouts are derived from it (see Timeouts).
	Lease time.Duration
}

// Timeouts returns the dial and read/write timeouts used with a run lease:
// a fifth of the lease, between 500 ms (1 s to dial) and 3 s. A lease is
// refreshed every third of itself and given up two thirds after its last
// refresh, so a command that hangs fails in time for the holder to notice.
func Timeouts(lease time.Duration) (dial, readWrite time.Duration) {
	if lease <= 0 {
		lease = 15 * time.Second
	}
	readWrite = min(max(lease/5, 500*time.Millisecond), 3*time.Second)
	return max(readWrite, time.Second), readWrite
}

// Connect connects to url and checks that it answers; an empty url starts
// an embedded in-process Redis instead. url is either
//
//	redis[s]://[[user]:password@]host:port[/db]
//
// or, for a Redis watched by Sentinel, go-redis's failover URL: the
// sentinels' addresses (the first as host, more as addr parameters) and the
// master's name as master_name, its password (if any) as password:
//
//	redis://[:sentinelpassword@]host1:26379[/db]?master_name=mymaster&addr=host2:26379&addr=host3:26379[&password=…]
//
// Everything (store, queue, leases, rate limits) then follows the master
// the sentinels name, across failovers.
//
// The client has explicit timeouts (Timeouts), a bounded pool wait, uses
// the callers' context deadlines on the socket, and retries a command at
// most twice, quickly: a Redis that restarts costs a few failed calls, not
// minutes of blocked workers, and the callers (the lease, the engine, the
// queue) handle what fails.
func Connect(ctx context.Context, url string, opts ConnOptions) (*Conn, error) {
	tuned := tuning(opts.Lease)
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start the embedded Redis: %w", err)
		}
		tuned.Addr = m.Addr()
		c := redis.NewClient(tuned)
		c.AddHook(newFirstEval())
		return &Conn{Client: c, Embedded: true, mini: m}, nil
	}
	if isSentinelURL(url) {
		return connectSentinel(ctx, url, tuned)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is not a valid redis:// URL: %w", err)
	}
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout, opt.PoolTimeout = tuned.DialTimeout, tuned.ReadTimeout, tuned.WriteTimeout, tuned.PoolTimeout
	opt.ContextTimeoutEnabled, opt.MaxRetries, opt.MinRetryBackoff, opt.MaxRetryBackoff = tuned.ContextTimeoutEnabled, tuned.MaxRetries, tuned.MinRetryBackoff, tuned.MaxRetryBackoff
	opt.PipelinePoolSize = tuned.PipelinePoolSize
	network := opt.Network
	network = cmp.Or(network, "tcp")
	if err := reachable(ctx, network, opt.Addr); err != nil {
		return nil, fmt.Errorf("cannot reach Redis at %s (%w): is it running? Check REDIS_URL, or unset it to use an embedded Redis whose state dies with the process", opt.Addr, err)
	}
	c := redis.NewClient(opt)
	c.AddHook(newFirstEval())
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("the Redis at %s refused us (%w): check the password and database in REDIS_URL", opt.Addr, err)
	}
	return &Conn{Client: c}, nil
}

// tuning returns the client options every connection shares (see Connect).
//
// Pipelines share the commands' pool (PipelinePoolSize -1): go-redis keeps
// a second pool for them by default, so a process's first pipeline (the
// page cache's batches, a full read of a run) opened a connection of its
// own, and each new connection is a HELLO. The commands' pool is the
// default size (10 a CPU), so a pipeline does not make a lease refresh
// wait for a connection.
func tuning(lease time.Duration) *redis.Options {
	dial, rw := Timeouts(lease)
	return &redis.Options{
		DialTimeout: dial, ReadTimeout: rw, WriteTimeout: rw, PoolTimeout: rw + time.Second,
		ContextTimeoutEnabled: true,
		MaxRetries:            2, MinRetryBackoff: 50 * time.Millisecond, MaxRetryBackoff: 500 * time.Millisecond,
		PipelinePoolSize: -1,
	}
}

// isSentinelURL reports whether url names a master by its sentinels
// (a master_name parameter).
func isSentinelURL(raw string) bool {
	u, err := neturl.Parse(raw)
	return err == nil && u.Query().Has("master_name")
}

// connectSentinel connects to the master the sentinels of url name.
func connectSentinel(ctx context.Context, url string, tuned *redis.Options) (*Conn, error) {
	fo, err := redis.ParseFailoverURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is not a valid Sentinel URL (redis://sentinel:26379/0?master_name=…&addr=…): %w", err)
	}
	if fo.MasterName == "" {
		return nil, errors.New("REDIS_URL names no master: master_name is empty")
	}
	fo.DialTimeout, fo.ReadTimeout, fo.WriteTimeout, fo.PoolTimeout = tuned.DialTimeout, tuned.ReadTimeout, tuned.WriteTimeout, tuned.PoolTimeout
	fo.ContextTimeoutEnabled, fo.MaxRetries, fo.MinRetryBackoff, fo.MaxRetryBackoff = tuned.ContextTimeoutEnabled, tuned.MaxRetries, tuned.MinRetryBackoff, tuned.MaxRetryBackoff
	fo.PipelinePoolSize = tuned.PipelinePoolSize
	var errs []error
	for _, addr := range fo.SentinelAddrs {
		if err := reachable(ctx, "tcp", addr); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == len(fo.SentinelAddrs) {
		return nil, fmt.Errorf("cannot reach any Redis sentinel of %v (%w): are they running? Check REDIS_URL", fo.SentinelAddrs, errors.Join(errs...))
	}
	c := redis.NewFailoverClient(fo)
	c.AddHook(newFirstEval())
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("the Redis master %q named by the sentinels %v did not answer (%w): check master_name, the passwords and the database in REDIS_URL", fo.MasterName, fo.SentinelAddrs, err)
	}
	return &Conn{Client: c}, nil
}

// reachable dials addr once, silently: the client's own retries would log a
// warning per attempt before the error a person needs.
func reachable(ctx context.Context, network, addr string) error {
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

// Close closes the client and stops an embedded Redis.
func (c *Conn) Close() error {
	err := c.Client.Close()
	if c.mini != nil {
		c.mini.Close()
	}
	return err
}
