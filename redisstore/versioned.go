package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// decodeVersioned decodes a record stored as a hash {v: version, data: JSON}
// (the reply of HMGET key v data) into dst and returns its version. A missing
// record is reported as notFound, wrapped with the kind and id.
func decodeVersioned(kind, id string, vals []any, notFound error, dst any) (int64, error) {
	vs, ok1 := vals[0].(string)
	data, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("%s %s: %w", kind, id, notFound)
	}
	if err := json.Unmarshal([]byte(data), dst); err != nil {
		return 0, fmt.Errorf("decode %s %s: %w", kind, id, err)
	}
	v, err := strconv.ParseInt(vs, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %s has a bad version %q", kind, id, vs)
	}
	return v, nil
}

// loadVersioned fetches the {v, data} fields of many versioned records in
// one round trip, in the order of keys; decode each with decodeVersioned.
func loadVersioned(ctx context.Context, rdb *redis.Client, keys []string) ([][]any, error) {
	cmds := make([]*redis.SliceCmd, len(keys))
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, k, "v", "data")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	vals := make([][]any, len(keys))
	for i, c := range cmds {
		vals[i] = c.Val()
	}
	return vals, nil
}
