package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/extract"
	"github.com/researchbot/researchbot/pipeline"
)

// Files people share are sources: a file attached in the start form, sent
// with the question in the bot's direct messages or assistant thread, or
// shared with an @mention in a run's thread before the plan is approved is
// downloaded with the bot token (files:read), read by extract within its
// bounds and given to the run (pipeline.File, with who shared it and
// where). A run takes only files shared in its own conversation or its
// start form (invariant 12). A file that cannot be read is named with the
// reason, and the run goes on without it. When files shared in a run's
// thread are added is bot/sharedfiles' (a feature); reading them is here
// (Request.ReadSharedFiles), as for the start form's.

// Bounds of reading a shared file.
const (
	// maxSharedFileBytes is the largest file read: extract's byte limit.
	maxSharedFileBytes = extract.DefaultMaxBytes
	// sharedFileTimeout bounds the download and extraction of one file.
	sharedFileTimeout = 30 * time.Second
	// afterFilesReserve is the time of a request kept for what follows the
	// reading of its files (starting the run, telling the thread).
	afterFilesReserve = 10 * time.Second
	// maxFileRedirects is how many redirects a download follows.
	maxFileRedirects = 5
	// slackFileHost is Slack's file host, the one host besides the Web API's
	// own (SLACK_API_URL) that is sent the bot token.
	slackFileHost = "files.slack.com"
)

// Why a shared file was not read, for people.
var (
	errNotSlackHost = errors.New("its download address is not on Slack's file host, so I did not send my token there")
	errRefused      = errors.New("the download was refused by Slack: researchbot needs the files:read scope — ask whoever installed it to reinstall the app with that scope")
	errMissingScope = errors.New("the file's description was refused by Slack: researchbot needs the files:read scope — ask whoever installed it to reinstall the app with that scope")
)

// fileDownloader downloads files from Slack with the bot token, which it
// sends only to Slack's hosts: every redirect to another host goes there
// without it (Go's client keeps it for the same host on another port and
// for subdomains, so this is checked here, not left to the client).
type fileDownloader struct {
	token    string
	hosts    map[string]bool // host[:port] sent the token
	client   *http.Client
	maxBytes int64
}

// newFileDownloader makes a downloader for token; apiURL is SLACK_API_URL
// ("" for Slack's), whose host is trusted like Slack's file host. base
// supplies the transport (nil: the default).
func newFileDownloader(token, apiURL string, base *http.Client) *fileDownloader {
	d := &fileDownloader{token: token, hosts: map[string]bool{slackFileHost: true}, maxBytes: maxSharedFileBytes}
	if u, err := url.Parse(apiURL); err == nil && u.Host != "" {
		d.hosts[strings.ToLower(u.Host)] = true
	}
	c := &http.Client{}
	if base != nil {
		c.Transport, c.Jar = base.Transport, base.Jar
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxFileRedirects {
			return fmt.Errorf("more than %d redirects", maxFileRedirects)
		}
		if req.URL.Scheme != "https" && req.URL.Scheme != "http" {
			return fmt.Errorf("a redirect to a %s address", req.URL.Scheme)
		}
		if !d.trusted(req.URL) {
			req.Header.Del("Authorization")
		}
		return nil
	}
	d.client = c
	return d
}

// trusted reports whether u is on a host that may see the token.
func (d *fileDownloader) trusted(u *url.URL) bool {
	return d.hosts[strings.ToLower(u.Host)]
}

// downloadFile fetches rawURL (a file's url_private_download) and returns
// its bytes and Content-Type, at most maxBytes of them. An HTML answer is
// Slack's sign-in page, refused, unless the file may itself be HTML
// (isHTML): then an HTML answer is the file, unless Slack redirected the
// download to its sign-in page (an address with a "redir" parameter, as
// Slack answers a download it does not authorise:
// slackapi/node-slack-sdk#1750).
func (d *fileDownloader) downloadFile(ctx context.Context, rawURL string, isHTML bool) ([]byte, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !d.trusted(u) {
		return nil, "", errNotSlackHost
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("the download failed: %w", redactURL(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, "", errRefused
	case resp.StatusCode != http.StatusOK:
		return nil, "", fmt.Errorf("the download failed: HTTP %d", resp.StatusCode)
	}
	ctype := resp.Header.Get("Content-Type")
	if mt, _, _ := mime.ParseMediaType(ctype); mt == "text/html" && (!isHTML || signInPage(resp.Request.URL)) {
		// Slack answers a download it does not authorise with its sign-in page.
		return nil, "", errRefused
	}
	if resp.ContentLength > d.maxBytes {
		return nil, "", tooLarge(d.maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.maxBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("the download failed: %w", redactURL(err))
	}
	if int64(len(body)) > d.maxBytes {
		return nil, "", tooLarge(d.maxBytes)
	}
	return body, ctype, nil
}

// signInPage reports whether a download ended at Slack's sign-in page
// rather than the file: an address carrying the download in its "redir"
// parameter (https://<workspace>.slack.com/?redir=%2Ffiles-pri%2F…).
func signInPage(final *url.URL) bool {
	return final != nil && final.Query().Has("redir")
}

// redactURL drops the address from a client error (it names the file).
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func tooLarge(limit int64) error {
	return fmt.Errorf("it is larger than %d MiB, the most I read of one file", limit>>20)
}

// unsupported is the refusal of a kind not read, with the kinds that are.
func unsupported() error {
	return errors.New("this kind of file is not read; accepted: " + extract.Accepted)
}

// sharedFile is a file shared in Slack, where and by whom.
type sharedFile struct {
	file   slack.File
	by, in string // the sharer's user id; the conversation it belongs to
}

// readSharedFiles downloads and reads files shared by user in channel (for
// the start form: attached for a run in channel), within the room a run has
// left (files, bytes). It returns the files read, and the others with why.
func (a *App) readSharedFiles(ctx context.Context, shared []sharedFile, room int, roomBytes int64) ([]pipeline.File, []blockkit.FileProblem) {
	var files []pipeline.File
	var problems []blockkit.FileProblem
	d := newFileDownloader(a.cfg.BotToken, a.cfg.APIURL, a.cfg.HTTPClient)
	// Leave the job time to start the run (or add the files) after reading.
	readCtx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		readCtx, cancel = context.WithDeadline(ctx, dl.Add(-afterFilesReserve))
		defer cancel()
	}
	for _, s := range shared {
		name := FileName(s.file)
		if readCtx.Err() != nil {
			problems = append(problems, blockkit.FileProblem{Name: name, Why: "not read in the time I have for one request; share fewer or smaller files"})
			continue
		}
		if len(files) >= room {
			problems = append(problems, blockkit.FileProblem{Name: name, Why: fmt.Sprintf("a research reads at most %d files", pipeline.MaxFiles)})
			continue
		}
		f, err := a.readSharedFile(readCtx, d, s)
		if err == nil && f.Bytes > roomBytes {
			err = fmt.Errorf("the files of this research would be larger than %d MiB together", pipeline.MaxFilesBytes>>20)
		}
		if err != nil {
			a.log.Info("bot: a shared file was not read", "file", s.file.ID, "err", err)
			problems = append(problems, blockkit.FileProblem{Name: name, Why: err.Error()})
			continue
		}
		roomBytes -= f.Bytes
		files = append(files, f)
	}
	return files, problems
}

// readSharedFile resolves, downloads and extracts one shared file.
func (a *App) readSharedFile(ctx context.Context, d *fileDownloader, s sharedFile) (pipeline.File, error) {
	ctx, cancel := context.WithTimeout(ctx, sharedFileTimeout)
	defer cancel()
	f := s.file
	if f.URLPrivateDownload == "" && f.ID != "" {
		// Slack sends only the id when the file's details must be asked
		// for ("file_access": "check_file_info").
		info, err := a.send.FileInfo(ctx, f.ID)
		if err != nil {
			if SlackErrorCode(err) == "missing_scope" || SlackErrorCode(err) == "not_allowed_token_type" {
				return pipeline.File{}, errMissingScope
			}
			return pipeline.File{}, fmt.Errorf("the file's description could not be read from Slack: %s", SlackErrorCode(err))
		}
		f = *info
	}
	if f.IsExternal || f.Mode == "external" {
		return pipeline.File{}, errors.New("it is a link to a file kept outside Slack; share the file itself")
	}
	if f.Mode == "tombstone" || f.Mode == "hidden_by_limit" {
		return pipeline.File{}, errors.New("the file is no longer available in Slack")
	}
	if int64(f.Size) > d.maxBytes {
		return pipeline.File{}, tooLarge(d.maxBytes)
	}
	mt := fileMediaType(f)
	kind, ok := extract.KindOf(nil, mt)
	if !ok && f.Filetype != "pdf" {
		return pipeline.File{}, unsupported()
	}
	body, ctype, err := d.downloadFile(ctx, f.URLPrivateDownload, kind == extract.KindHTML)
	if err != nil {
		return pipeline.File{}, err
	}
	mt = cmp.Or(mt, ctype)
	doc, err := extract.Extract(ctx, body, mt, extract.Limits{MaxBytes: d.maxBytes})
	if err != nil {
		var xe *extract.Error
		if errors.As(err, &xe) && xe.Reason == extract.ReasonUnsupported {
			return pipeline.File{}, unsupported()
		}
		return pipeline.File{}, err
	}
	return pipeline.File{
		Name: FileName(f), Kind: string(doc.Kind), Bytes: int64(len(body)), Text: doc.Text, Truncated: doc.Truncated,
		PageCount: doc.PageCount, PageStarts: doc.PageStarts, Note: doc.Note, SharedBy: s.by, SharedIn: s.in,
	}, nil
}

// FileName is a shared file's base name, never a path: how the bot names
// it to people (a feature naming the files it refuses says it so).
func FileName(f slack.File) string {
	n := strings.TrimSpace(blockkit.FirstNonEmpty(f.Name, f.Title, f.ID, "file"))
	n = path.Base(strings.ReplaceAll(n, `\`, "/"))
	if n == "/" || n == "." || n == ".." {
		return blockkit.FirstNonEmpty(f.ID, "file")
	}
	return n
}

// fileMediaType labels a shared file: by its name's suffix as the terminal
// does (extract.TypeByName), else by what Slack says it is.
func fileMediaType(f slack.File) string {
	if mt := extract.TypeByName(f.Name); mt != "" {
		return mt
	}
	return f.Mimetype
}

// sharedFilesOf describes the files of a message for readSharedFiles.
func sharedFilesOf(files []slack.File, by, in string) []sharedFile {
	out := make([]sharedFile, len(files))
	for i, f := range files {
		out[i] = sharedFile{file: f, by: by, in: in}
	}
	return out
}

// readStartFiles reads the files shared with a research request (the start
// form's, or those sent with the question) for a run in channel.
func (a *App) readStartFiles(ctx context.Context, files []slack.File, user, channel string) ([]pipeline.File, []blockkit.FileProblem) {
	if len(files) == 0 {
		return nil, nil
	}
	return a.readSharedFiles(ctx, sharedFilesOf(files, user, channel), pipeline.MaxFiles, pipeline.MaxFilesBytes)
}

// tellFileProblems posts, in the run's thread, which files were not read.
func (a *App) tellFileProblems(ctx context.Context, channel, thread string, problems []blockkit.FileProblem, outcome string) {
	if len(problems) == 0 {
		return
	}
	if _, err := a.send.Post(ctx, channel, thread, blockkit.RenderFileProblems(problems, outcome), blockkit.FileProblemsText(len(problems))); err != nil {
		a.log.Warn("bot: telling which files were not read failed", "err", err)
	}
}

// ReadSharedFiles downloads (with the bot token, sent only to Slack) and
// reads files, shared by the person who made the request in its channel,
// within the room a run has left (room files, roomBytes bytes; see
// pipeline.FilesRoom). It returns the files read, and the others with why,
// written for people. A feature adding files shared in a run's thread
// (bot/sharedfiles) calls it: the reading, its bounds and its token are
// the transport's, as for the files a research starts with.
func (r *Request) ReadSharedFiles(ctx context.Context, files []slack.File, room int, roomBytes int64) ([]pipeline.File, []blockkit.FileProblem) {
	if r.app == nil {
		problems := make([]blockkit.FileProblem, len(files))
		for i, f := range files {
			problems[i] = blockkit.FileProblem{Name: FileName(f), Why: "not read: no App serves this request"}
		}
		return nil, problems
	}
	return r.app.readSharedFiles(ctx, sharedFilesOf(files, r.UserID, r.Channel), room, roomBytes)
}

// notEnabledFiles tells, when no feature takes the files shared in a run's
// thread (Config.Files is nil), that they are not read; it reports true
// when the mention has nothing more to say (no text).
func (a *App) notEnabledFiles(ctx context.Context, m Mention) bool {
	if len(m.Files) == 0 {
		return false
	}
	names := make([]blockkit.FileProblem, len(m.Files))
	for i, f := range m.Files {
		names[i] = blockkit.FileProblem{Name: FileName(f), Why: "reading shared files is not enabled on this researchbot"}
	}
	a.tellFileProblems(ctx, m.Channel, m.Thread, names, "")
	return m.Text == ""
}
