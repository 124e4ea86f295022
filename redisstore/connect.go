package redisstore

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Conn is a connection to the Redis that holds researchbot's state.
type Conn struct {
	// Client is the go-redis client of the store, the queue (asynq shares
	// it), the leases and the rate limits.
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

// Connect connects to url (redis:// or rediss://) and checks that it
// answers; an empty url starts an embedded in-process Redis instead.
//
// The client has explicit timeouts (Timeouts), a bounded pool wait, uses
// the callers' context deadlines on the socket, and retries a command at
// most twice, quickly: a Redis that restarts costs a few failed calls, not
// minutes of blocked workers, and the callers (the lease, the engine, the
// queue) handle what fails.
func Connect(ctx context.Context, url string, opts ConnOptions) (*Conn, error) {
	dial, rw := Timeouts(opts.Lease)
	tune := func(o *redis.Options) {
		o.DialTimeout = dial
		o.ReadTimeout = rw
		o.WriteTimeout = rw
		o.PoolTimeout = rw + time.Second
		o.ContextTimeoutEnabled = true
		o.MaxRetries = 2
		o.MinRetryBackoff = 50 * time.Millisecond
		o.MaxRetryBackoff = 500 * time.Millisecond
	}
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start the embedded Redis: %w", err)
		}
		opt := &redis.Options{Addr: m.Addr()}
		tune(opt)
		return &Conn{Client: redis.NewClient(opt), Embedded: true, mini: m}, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is not a valid redis:// URL: %w", err)
	}
	tune(opt)
	// One silent dial first: the client's own retries would log a warning per
	// attempt before the error a person needs.
	network := opt.Network
	if network == "" {
		network = "tcp"
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, network, opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Redis at %s (%w): is it running? Check REDIS_URL, or unset it to use an embedded Redis whose state dies with the process", opt.Addr, err)
	}
	_ = conn.Close()
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("the Redis at %s refused us (%w): check the password and database in REDIS_URL", opt.Addr, err)
	}
	return &Conn{Client: c}, nil
}

// Close closes the client and stops an embedded Redis.
func (c *Conn) Close() error {
	err := c.Client.Close()
	if c.mini != nil {
		c.mini.Close()
	}
	return err
}
