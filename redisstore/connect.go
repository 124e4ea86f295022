package redisstore

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Conn is a connection to the Redis that holds researchbot's state.
type Conn struct {
	// Client is the go-redis client for the store, locks and rate limits.
	Client *redis.Client
	// Queue is the connection option asynq uses for the same Redis.
	Queue asynq.RedisConnOpt
	// Embedded is true when the Redis runs inside this process and nothing
	// survives the process.
	Embedded bool
	mini     *miniredis.Miniredis
}

// Connect connects to url (redis:// or rediss://) and checks that it answers;
// an empty url starts an embedded in-process Redis instead.
func Connect(ctx context.Context, url string) (*Conn, error) {
	if url == "" {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			return nil, fmt.Errorf("start the embedded Redis: %w", err)
		}
		opt := &redis.Options{Addr: m.Addr()}
		return &Conn{Client: redis.NewClient(opt), Queue: asynq.RedisClientOpt{Addr: m.Addr()}, Embedded: true, mini: m}, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is not a valid redis:// URL: %w", err)
	}
	// One silent dial first: the client's own retries would log a warning per
	// attempt before the error a person needs.
	network := opt.Network
	if network == "" {
		network = "tcp"
	}
	d := net.Dialer{Timeout: 3 * time.Second}
	conn, err := d.DialContext(ctx, network, opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Redis at %s (%v): is it running? Check REDIS_URL, or unset it to use an embedded Redis whose state dies with the process", opt.Addr, err)
	}
	_ = conn.Close()
	c := redis.NewClient(opt)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("Redis at %s refused us (%v): check the password and database in REDIS_URL", opt.Addr, err)
	}
	qopt, err := asynq.ParseRedisURI(url)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return &Conn{Client: c, Queue: qopt}, nil
}

// Close closes the client and stops an embedded Redis.
func (c *Conn) Close() error {
	err := c.Client.Close()
	if c.mini != nil {
		c.mini.Close()
	}
	return err
}
