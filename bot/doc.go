// Package bot is researchbot's Slack adapter.
//
// It connects to Slack with Socket Mode (slack-go's socketmode client), acks
// every envelope within Slack's three seconds, and does the slow work after
// the ack on a bounded pool of workers. It routes the /research slash
// command, button clicks, modal submissions and thread messages to their
// handlers (its own, for starting, listing and cancelling runs, and its
// features'), reaches the research engine through the small Engine
// interface declared here, states the rules about checkpoints that
// features follow (who may decide, whether a checkpoint is current, how a
// decision is recorded: checkpoint_rules.go), and rate-limits new runs per
// user and per workspace. What it keeps for every replica (the rate
// budgets and the Slack memory, SlackMemory) it reaches through the small ports
// of memory.go, which redisstore implements.
//
// Before it routes anything it checks the request: it must come from the
// workspace and app the bot token belongs to (learned from auth.test and
// bots.info before connecting; installation.go), and it must not have been
// taken before by any replica — Slack retries events and redelivers
// envelopes, and the same event_id or trigger_id is acted on once
// (delivery.go). Refusals are polite and logged; every logged value is
// bounded (logcap.go).
//
// What is shown in Slack is rendered by the pure functions of the leaf
// package bot/blockkit (messages, App Home, forms and the parsing of their
// submissions) from the pipeline's run and checkpoint data, with every piece
// of untrusted text (questions, web pages, model output) escaped for mrkdwn
// and kept within Block Kit's limits; golden files in testdata/golden, here
// and in blockkit, pin them. bot decides what to show and sends it.
//
// bot is the transport; a feature may live in its own package under bot/
// (bot/streams, research streams; bot/feedback, the 👍 / 👎 verdicts;
// bot/share, sharing a report from the assistant panel; bot/neverdomain, the
// source review's "Never use a site…"; bot/home, the App Home and the
// checkpoint definitions' admin; bot/sharedfiles, files shared in a run's
// thread; bot/clarify, clarifying questions answered by mention;
// bot/steering, steering notes for unfinished runs; bot/followups, follow-up
// questions and "Research this"; bot/start, the start form opened by
// "/research" without text and the shortcuts; bot/assistant, the assistant
// panel; bot/decisions, what a person does with a checkpoint message:
// Approve, Edit, Reject, their forms, Skip, Retry, Continue without it) and
// import bot — the routes it registers (Registrar), the Request it
// answers, the Kit it is built with (the Sender it posts with, the App's
// metrics, logger and clock), Tell for what it cannot do — and
// bot/blockkit, never another feature. bot imports no feature: it declares
// the seam (Config.Features for a feature's own routes, shortcuts among
// them (Routes.Shortcut), and clicks that open a form on the fast path
// before the pool (Routes.FormAction, forms.go: the trigger_id lives 3 s);
// StreamHandler and MentionHandler in Config.Streams for the streams'
// command and mentions; Home in Config.Home, told of clicks on the tab;
// RunMessageHandler in Config.Files, Config.Clarify, Config.Steering and
// Config.FollowUps for what is said in a run's thread; Assistant in
// Config.Assistant for the assistant panel's events and what is said in
// its threads) and the assembly plugs the feature in (internal/archtest
// holds the rule). The routing of mentions and thread replies stays bot's
// (converse.go): one order, stated once; so does starting a run, whichever
// way it is asked for (startResearch: the slash command, a mention, the
// start form, the assistant panel and "Research this" through
// Request.StartResearch); so do the rules about checkpoints, which the
// checkpoints' buttons (bot/decisions), a clarifying answer and "Never use
// a site…" follow through the Request (CheckCheckpoint, Decide,
// AdoptClickedMessage for the Presenter's memory of checkpoint messages).
// bot/bottest runs a real App with the features a test plugs in.
//
// The assistant panel (assistant.go), where a workspace has Slack's AI-app
// feature: a person opens researchbot beside a channel, is greeted with
// suggested prompts, and a question typed there runs in that thread like
// any other run, with the thread titled after it and a status naming the
// run's stage while it works. Without the feature the calls fail, the bot
// remembers it per workspace, and the person sees plain messages.
//
// Presenter implements pipeline.Presenter for runs that started in Slack
// (the engine's side of Slack, which stays here: it posts and remembers
// what the features' buttons act on): checkpoint messages in the run's
// thread, a stranded one's Skip / Retry / Continue without it among them
// (presenter_checkpoint.go), one
// paced progress message edited in place (presenter_progress.go), and the
// final report with the full Markdown attached (presenter_final.go). Metrics
// implements pipeline.Observer and serves Prometheus metrics next to
// /healthz and /readyz.
package bot
