// Package redisstore is researchbot's one room for Redis: the only package
// that imports go-redis and redis_rate. It holds runs saved with a
// version check (compare-and-set) and a fencing token, checkpoint
// definitions and their failure windows, cancellation requests, the work
// queue (the store's own indexes of runs with work and of checkpoint
// deadlines, which workers claim from, with wake hints on pub/sub), the
// per-run lease (through which dead workers' runs are taken over),
// retention, research streams and their creation conversations, and it
// implements the small ports other packages declare: the rate budgets of
// llm, search and bot (RateLimiter), fetch's page cache (PageCache) and the
// Slack adapter's memory (SlackMemory). The same code serves a real Redis
// and the embedded in-process one (miniredis).
//
// # Keys
//
// Every key researchbot writes is listed here. {p} is the prefix of Store,
// Locker, Streams, Conversations and ChannelDefaults (DefaultPrefix, "rb:",
// by default and in production: Open hands them all out under one prefix);
// the ports always use "rb:".
//
//	{p}run:{id}                  hash: v (version), data (run JSON without page texts), status,
//	                             fence (lease epoch), nonce (id of the last write),
//	                             ix, ixat (what the indexes say of the run, and when written),
//	                             cancel (who asked to cancel, as in {p}cancel:{id}),
//	                             watchers (how many Watches follow the run: saves announce it while > 0)
//	{p}run:{id}:pages            hash: source id → extracted page text
//	{p}runs                      zset: run ids by creation time (ms)
//	{p}runs:by:{user}            zset: a requester's run ids by creation time
//	{p}runs:active               zset: unfinished run ids by last save (ms), for the gauge
//	{p}work:{queue}              zset: runs of a queue a worker has something to do for, by last save (ms):
//	                             with the timers index, the work queue itself (Worker claims from it)
//	{p}timers:{queue}            zset: runs of a queue waiting at a checkpoint with a deadline, by deadline
//	                             (ms, rounded up): the durable timers
//	{p}queues                    set: queues that have had runs (a terminal's private queue is forgotten
//	                             by its last run's final save, or, abandoned, by another process's claim pass)
//	{p}claim:{id}                string, with a TTL: a worker claimed the run (a claim pass, for a lease;
//	                             a retry, until its time): other replicas' passes leave it alone
//	{p}wake:{queue}              pub/sub channel, not a key: wake hints for the workers of a queue
//	                             (a run id, or "t:{unix ms}" for a deadline; Queue.Wake/WakeAt)
//	{p}lock:run:{id}             string: the run's lease, the holder's token, with a TTL (taken by the
//	                             Locker, or by the create of a run this process's worker takes at once)
//	{p}defs                      hash: checkpoint definition id → JSON
//	{p}cpfail:{def}              zset: failure times (ms) of a checkpoint definition
//	{p}cpalert:{def}             string: the admins were alerted about this tripped breaker (TTL: its window; reset deletes it)
//	{p}cancel:{id}               string: who asked to cancel the run
//	{p}saved:{id}                pub/sub channel, not a key: a save of the run that another process
//	                             watches publishes "{version} {data}" there (Watch subscribes;
//	                             nothing is stored)
//	{p}stream:{id}               hash: v (version), data (stream JSON), name (its NameKey)
//	{p}streams                   zset: stream ids by creation time (ms)
//	{p}streamname:{namekey}      string: the id of the stream with that name
//	{p}stream:{id}:fire:{unix}   string, with a TTL: the exactly-once claim of one fire
//	{p}streamconv:{channel}:{ts} hash: v (version), owner, data (a stream creation conversation)
//	{p}chandefaults:{channel}    hash: field → value: the start form's last settings in a channel (ChannelDefaults)
//	rb:rate:{area}:{key}         hash (redis_rate's GCRA state): a rate budget (RateLimiter);
//	                             areas: llm:{provider}, search:{backend},
//	                             slack:user:{team}:{user}, slack:team:{team}
//	rb:fetch:page:v1:{hash}      string, with a TTL: a fetched page (PageCache)
//	rb:fetch:robots:v1:{hash}    string, with a TTL: an origin's robots.txt (PageCache)
//	rb:slack:cp:{instance}       string: where a checkpoint's message is, JSON (SlackMemory, the keys of bot.SlackMemory)
//	rb:slack:progress:{run}      string: the ts of a run's progress message
//	rb:slack:held                sorted set: runs stored held while their root message is posted, by when (ms)
//	rb:slack:held:claim:{run}    string, with a TTL: a process is finishing the start of that held run
//	rb:slack:intent:{run}:{post} string, with a TTL: a post of the run (root, outcome, progress, a checkpoint's) may be in flight since (unix ms); kept from the earliest attempt
//	rb:slack:final:{run}         hash: how far a run's final post got (summary ts, file, notice, done)
//	rb:slack:draftfile:{run}     hash: the draft attached to a run's draft review (version, file id)
//	rb:slack:seen:{kind}:{id}    string, with a TTL: a Slack delivery taken by some replica
//	rb:slack:thread:{channel}:{ts}     string: the id of the run whose thread it is (follow-ups)
//	rb:slack:home:{user}         string, with a TTL: the user's App Home was published (refresh it after a decision)
//	rb:slack:escalated:{run}:{instance}:{user}  string: that user was sent the checkpoint's escalation DM
//	rb:slack:share:done:{run}:{channel}  string: the ts of a run's report shared to the channel
//	rb:slack:share:lock:{run}:{channel}  string, with a TTL: a share of the report to the channel is being posted
//	rb:slack:assistant:{channel}:{ts}  string, with a TTL: an assistant panel thread, JSON (its user, the channel viewed beside it)
//	rb:slack:assistant:off:{team}      string, with a TTL: the workspace answered the assistant calls with a feature error (the error)
//	rb:slack:planstream:{run}          string, with a TTL: a run's streamed plan, JSON (the stream's ts, open or not, what each task shows, the checkpoint it stopped for)
//	rb:slack:planstream:off:{team}     string, with a TTL: the workspace answered chat.startStream with a feature error (the error)
//
// A finished run whose outcome was shown expires after the retention
// (RUN_RETENTION), its page texts sooner (RUN_PAGE_RETENTION); a run that
// is not finished never expires. Prune removes what expired from the indexes.
package redisstore

// Key prefixes of the ports (the table above).
const (
	keyRate  = DefaultPrefix + "rate:"
	keyFetch = DefaultPrefix + "fetch:"
	keySlack = DefaultPrefix + "slack:"
)
