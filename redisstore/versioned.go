package redisstore

import (
	"encoding/json"
	"fmt"
	"strconv"
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
