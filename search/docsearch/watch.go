package docsearch

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// Watch brings the index up to date now and then every interval on
// clock, until ctx ends; it returns then. A failed check is logged and
// the next one tried at its time.
func (c *Collection) Watch(ctx context.Context, clock quartz.Clock, interval time.Duration) {
	check := func() error {
		rep, err := c.Update(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			c.log.Warn("document collection check failed", "err", err)
		case err == nil && rep.Added+rep.Changed+rep.Removed > 0:
			c.log.Info("document collection updated", "added", rep.Added, "changed", rep.Changed,
				"removed", rep.Removed, "skipped", rep.Skipped, "took", rep.Took)
		}
		for _, e := range rep.FolderErrors {
			c.log.Warn("document collection folder not read", "err", e)
		}
		return nil
	}
	_ = check()
	_ = clock.TickerFunc(ctx, interval, check, "docsearch", "watch").Wait()
}
