package bot

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/extract"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// authRecorder is a file host that records the Authorization headers it
// receives and serves body.
type authRecorder struct {
	mu      sync.Mutex
	headers []string
	body    string
	ctype   string
}

func (h *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.headers = append(h.headers, r.Header.Get("Authorization"))
	h.mu.Unlock()
	w.Header().Set("Content-Type", h.ctype)
	_, _ = w.Write([]byte(h.body))
}

func (h *authRecorder) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.headers...)
}

// slackHost is Slack's file host in a test: it checks the bot token and
// redirects downloads to redirect when set.
func slackHost(t *testing.T, redirect string, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer xoxb-test" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<html>Sign in</html>"))
			return
		}
		if redirect != "" {
			http.Redirect(w, r, redirect+r.URL.Path, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestDownloadSendsTheTokenOnlyToSlack: the token goes to Slack's host;
// a redirect to another host (here the same address on another port,
// which Go's client would send it to) arrives without it; an address
// that is not Slack's is refused before any request.
func TestDownloadSendsTheTokenOnlyToSlack(t *testing.T) {
	ctx := context.Background()
	cdn := &authRecorder{body: "cdn bytes", ctype: "application/octet-stream"}
	other := httptest.NewServer(cdn)
	t.Cleanup(other.Close)
	slackSrv := slackHost(t, other.URL, "")

	// What Go's client does by itself: the redirect to another port of the
	// same host keeps the header. This is why the downloader checks hosts.
	req, _ := http.NewRequest(http.MethodGet, slackSrv.URL+"/files-pri/T-F1/download/a.pdf", nil)
	req.Header.Set("Authorization", "Bearer xoxb-test")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if got := cdn.seen(); len(got) != 1 || got[0] == "" {
		t.Fatalf("Go's default client sent %q to the other port; the premise of this test changed", got)
	}

	d := newFileDownloader("xoxb-test", slackSrv.URL+"/api/", nil)
	body, _, err := d.download(ctx, slackSrv.URL+"/files-pri/T-F1/download/a.pdf")
	if err != nil || string(body) != "cdn bytes" {
		t.Fatalf("download through a redirect: %q, %v", body, err)
	}
	if got := cdn.seen(); len(got) != 2 || got[1] != "" {
		t.Errorf("the other host received Authorization %q, want none", got[1:])
	}

	direct := &authRecorder{body: "x", ctype: "text/plain"}
	elsewhere := httptest.NewServer(direct)
	t.Cleanup(elsewhere.Close)
	if _, _, err := d.download(ctx, elsewhere.URL+"/file.txt"); !errors.Is(err, errNotSlackHost) {
		t.Errorf("a download address off Slack's hosts: %v, want errNotSlackHost", err)
	}
	if got := direct.seen(); len(got) != 0 {
		t.Errorf("the host that is not Slack's was asked %d times", len(got))
	}
	if !newFileDownloader("xoxb-test", "", nil).trusted(mustURL(t, "https://files.slack.com/files-pri/T-F/download/a.pdf")) {
		t.Error("files.slack.com is not trusted with the token")
	}
	if newFileDownloader("xoxb-test", "", nil).trusted(mustURL(t, "https://files.slack.com.evil.example/x")) {
		t.Error("a look-alike host is trusted with the token")
	}
}

// TestDownloadBoundsAndRefusals: a body over the byte limit is refused
// (with or without a Content-Length); Slack's sign-in page (the answer to
// a token without files:read) is a refusal naming the scope.
func TestDownloadBoundsAndRefusals(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("x", 64)
	srv := slackHost(t, "", big)
	d := newFileDownloader("xoxb-test", srv.URL, nil)
	d.maxBytes = 32
	if _, _, err := d.download(ctx, srv.URL+"/files-pri/T-F1/download/a.txt"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a body over the limit: %v", err)
	}
	chunked := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 8 {
			_, _ = w.Write([]byte(big[:8]))
			w.(http.Flusher).Flush() // no Content-Length
		}
	}))
	t.Cleanup(chunked.Close)
	d2 := newFileDownloader("xoxb-test", chunked.URL, nil)
	d2.maxBytes = 32
	if _, _, err := d2.download(ctx, chunked.URL+"/f"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a streamed body over the limit: %v", err)
	}
	noScope := newFileDownloader("xoxb-other", srv.URL, nil)
	noScope.token = "xoxb-no-files-read"
	if _, _, err := noScope.download(ctx, srv.URL+"/files-pri/T-F1/download/a.txt"); !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "files:read") {
		t.Errorf("a refused download: %v, want errRefused naming files:read", err)
	}
}

// TestASharedFileOfAKindNotReadIsRefusedWithTheAcceptedKinds: a
// spreadsheet is refused before it is downloaded, naming the kinds read;
// one too large by Slack's own size is refused the same way.
func TestASharedFileOfAKindNotReadIsRefusedWithTheAcceptedKinds(t *testing.T) {
	host := &authRecorder{body: "PK\x03\x04", ctype: "application/octet-stream"}
	srv := httptest.NewServer(host)
	t.Cleanup(srv.Close)
	a := &App{}
	d := newFileDownloader("xoxb-test", srv.URL, nil)
	sheet := slack.File{ID: "F1", Name: "budget.xlsx", Mimetype: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Filetype: "xlsx", Size: 4, URLPrivateDownload: srv.URL + "/f/budget.xlsx"}
	_, err := a.readSharedFile(context.Background(), d, sharedFile{file: sheet, by: "U1", in: "C1"})
	if err == nil || !strings.Contains(err.Error(), "accepted: "+extract.Accepted) {
		t.Errorf("a spreadsheet: %v, want refused with the accepted kinds", err)
	}
	huge := slack.File{ID: "F2", Name: "big.pdf", Mimetype: "application/pdf", Filetype: "pdf", Size: extract.DefaultMaxBytes + 1, URLPrivateDownload: srv.URL + "/f/big.pdf"}
	if _, err := a.readSharedFile(context.Background(), d, sharedFile{file: huge}); err == nil || !strings.Contains(err.Error(), "larger than 5 MiB") {
		t.Errorf("a file larger than the limit: %v", err)
	}
	if got := host.seen(); len(got) != 0 {
		t.Errorf("refused files were downloaded %d times", len(got))
	}
	text := slack.File{ID: "F3", Name: "notes.txt", Mimetype: "text/plain", Filetype: "text", Size: 4, URLPrivateDownload: srv.URL + "/f/notes.txt"}
	host.body, host.ctype = "Heat pumps keep working at minus 20 degrees.", "text/plain"
	f, err := a.readSharedFile(context.Background(), d, sharedFile{file: text, by: "U1", in: "C1"})
	if err != nil || f.Name != "notes.txt" || f.SharedBy != "U1" || f.SharedIn != "C1" || !strings.Contains(f.Text, "minus 20") {
		t.Errorf("a text file: %+v, %v", f, err)
	}
}

// TestSharedFileNamesAreBaseNames: a name that looks like a path is cut
// to its base name.
func TestSharedFileNamesAreBaseNames(t *testing.T) {
	for in, want := range map[string]string{"report.pdf": "report.pdf", "../../etc/passwd": "passwd", `a\b.md`: "b.md", "": "F9"} {
		if got := FileName(slack.File{ID: "F9", Name: in}); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestASharedFileWithoutTheScopeSaysToReinstall: through the fake Slack, a
// file known only by its id is described by files.info; when Slack answers
// missing_scope, and when a download gets Slack's sign-in page, the reason
// says to reinstall the app with files:read.
func TestASharedFileWithoutTheScopeSaysToReinstall(t *testing.T) {
	fake := slackfake.New(t)
	id := fake.UploadUserFile("U1", "notes.md", "text/plain", "markdown", []byte("# Notes\n\nDefrost cycles cost energy.\n"))
	a := &App{send: NewSender(SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL()})}
	d := newFileDownloader(fake.BotToken(), fake.APIURL(), nil)
	byID := sharedFile{file: slack.File{ID: id}, by: "U1", in: "C1"}

	f, err := a.readSharedFile(context.Background(), d, byID)
	if err != nil || f.Name != "notes.md" || f.Kind != string(extract.KindMarkdown) || !strings.Contains(f.Text, "Defrost") {
		t.Fatalf("a file known by id: %+v, %v", f, err)
	}
	fake.FailMissingScope("files.info", 1, "files:read", "chat:write")
	if _, err := a.readSharedFile(context.Background(), d, byID); !errors.Is(err, errMissingScope) || !strings.Contains(err.Error(), "reinstall the app with that scope") {
		t.Errorf("files.info without the scope: %v", err)
	}
	wrong := newFileDownloader("xoxb-without-files-read", fake.APIURL(), nil)
	if _, err := a.readSharedFile(context.Background(), wrong, byID); !errors.Is(err, errRefused) {
		t.Errorf("a download Slack does not authorise: %v, want errRefused", err)
	}
	if d := fake.FileDownloads(); len(d) != 2 || !d[0].Authorized || d[1].Authorized {
		t.Errorf("downloads %+v, want one with the token, one refused", d)
	}
}

// TestSharedFilesLeaveTimeToStartTheRun: a request whose time is nearly up
// reads no file (each named with why) rather than leaving none to start
// the run.
func TestSharedFilesLeaveTimeToStartTheRun(t *testing.T) {
	host := &authRecorder{body: "text", ctype: "text/plain"}
	srv := httptest.NewServer(host)
	t.Cleanup(srv.Close)
	a := &App{cfg: Config{BotToken: "xoxb-test", APIURL: srv.URL}, log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), afterFilesReserve/2)
	defer cancel()
	f := slack.File{ID: "F1", Name: "a.txt", Mimetype: "text/plain", Size: 4, URLPrivateDownload: srv.URL + "/a.txt"}
	files, problems := a.readSharedFiles(ctx, sharedFilesOf([]slack.File{f}, "U1", "C1"), 20, 1<<20)
	if len(files) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Why, "not read in the time") {
		t.Errorf("files %v, problems %v", files, problems)
	}
	if n := len(host.seen()); n != 0 {
		t.Errorf("%d downloads with no time left", n)
	}
}

// TestASharedHTMLFileIsReadAsItsMainText: a saved web page shared in Slack
// is read like --file reads it (its main text, not its markup), even when
// Slack serves it as text/html; a download that ends at Slack's sign-in
// page (a redirect to an address with "redir") is still refused.
func TestASharedHTMLFileIsReadAsItsMainText(t *testing.T) {
	const page = `<!DOCTYPE html><html><head><title>Heat pumps in the cold</title><script>track()</script></head><body>
<nav><a href="/">Home</a></nav><article><h1>Heat pumps in the cold</h1>
<p>Field trials in Norway found that air-source heat pumps kept homes warm at minus twenty degrees, with a seasonal efficiency above two and a half.</p>
</article><footer>Subscribe to our newsletter.</footer></body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("/f/story.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	})
	mux.HandleFunc("/f/locked.html", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body><p>Sign in to your workspace to see this file and every other message of the team.</p></body></html>"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a := &App{}
	d := newFileDownloader("xoxb-test", srv.URL, nil)
	story := slack.File{ID: "F1", Name: "story.html", Mimetype: "text/html", Filetype: "html", Size: len(page), URLPrivateDownload: srv.URL + "/f/story.html"}
	f, err := a.readSharedFile(context.Background(), d, sharedFile{file: story, by: "U1", in: "C1"})
	if err != nil || f.Name != "story.html" || f.Kind != string(extract.KindHTML) || !strings.Contains(f.Text, "minus twenty degrees") ||
		strings.ContainsAny(f.Text, "<>") || strings.Contains(f.Text, "track()") || strings.Contains(f.Text, "Subscribe") {
		t.Errorf("an HTML file: %+v, %v", f, err)
	}
	locked := slack.File{ID: "F2", Name: "locked.html", Mimetype: "text/html", Filetype: "html", Size: 10, URLPrivateDownload: srv.URL + "/f/locked.html"}
	if _, err := a.readSharedFile(context.Background(), d, sharedFile{file: locked}); !errors.Is(err, errRefused) {
		t.Errorf("an HTML file that ends at the sign-in page: %v, want errRefused", err)
	}
	notes := slack.File{ID: "F3", Name: "notes.txt", Mimetype: "text/plain", Filetype: "text", Size: 10, URLPrivateDownload: srv.URL + "/f/story.html"}
	if _, err := a.readSharedFile(context.Background(), d, sharedFile{file: notes}); !errors.Is(err, errRefused) {
		t.Errorf("a text file answered with HTML: %v, want errRefused (the sign-in page)", err)
	}
}

// download is downloadFile for a file that is not HTML.
func (d *fileDownloader) download(ctx context.Context, rawURL string) ([]byte, string, error) {
	return d.downloadFile(ctx, rawURL, false)
}
