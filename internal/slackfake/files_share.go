package slackfake

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/slack-go/slack"
)

// Files people share with the bot, as Slack hands them to an app:
//
//   - a person uploads a file (UploadUserFile); Slack keeps it private and
//     describes it with a file object (https://docs.slack.dev/reference/objects/file-object):
//     url_private_download is where an app downloads it, with its token in
//     an "Authorization: Bearer" header (files:read);
//   - the file arrives with a message: an app_mention or a message event
//     carrying a "files" array of file objects (the message event has the
//     subtype "file_share"), or in a modal's file_input, whose state in the
//     view_submission payload is {"type": "file_input", "files": [file objects]};
//   - files.info describes a file by id: {"ok": true, "file": {…},
//     "comments": [], "response_metadata": {"next_cursor": ""}}.
//
// A download without the bot's token is answered as Slack answers a
// browser without a session: 200 with an HTML sign-in page, not the file
// (reported in slackapi/bolt-js#2585, wee-slack/wee-slack#767 and
// grundleborg/slack-advanced-exporter#13; Slack may also first redirect to
// the workspace's sign-in, slackapi/deno-slack-sdk#285).
// RedirectFileDownloads makes downloads answer with a redirect to another
// host, as Slack may send a download to its file CDN.

// FileDownload is one request for a file's url_private_download.
type FileDownload struct {
	FileID string
	// Authorized reports that the request carried the bot token.
	Authorized bool
	// Header is the Authorization header as received ("" when none).
	Header string
}

// fileDownloads is what the fake knows of downloads.
type fileDownloads struct {
	log      []FileDownload
	redirect string // base URL downloads are redirected to; "" serves them
	// checkInfo makes events carry only each file's id, as Slack does for a
	// file the app must ask files.info about (a Slack Connect file).
	checkInfo bool
}

// ShareFilesByIDOnly makes the files of later message and app_mention
// events minimal objects, {"id", "mode": "file_access", "file_access":
// "check_file_info", …}, as Slack sends them when the app must call
// files.info (the shape of a real Slack Connect payload, kept in
// slack-web's tests as message_file_share_slack_connect.json).
func (s *Server) ShareFilesByIDOnly(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downloads.checkInfo = on
}

// UploadUserFile stores a file userID uploaded (not shared anywhere yet,
// as in a modal's file_input) and returns its id. mimetype and filetype
// are what Slack detected ("application/pdf", "pdf").
func (s *Server) UploadUserFile(userID, name, mimetype, filetype string, content []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID("F")
	s.files[id] = &File{ID: id, Name: name, Title: name, Content: content, DeclaredLength: len(content), Completed: true,
		User: userID, Mimetype: mimetype, Filetype: filetype, Created: s.now().Unix()}
	s.fileOrder = append(s.fileOrder, id)
	return id
}

// RedirectFileDownloads makes every authorised download answer with a 302
// to base + the download's path (another host: a CDN); "" serves them again.
func (s *Server) RedirectFileDownloads(base string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downloads.redirect = strings.TrimSuffix(base, "/")
}

// FileDownloads returns the downloads of url_private_download so far.
func (s *Server) FileDownloads() []FileDownload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FileDownload(nil), s.downloads.log...)
}

// downloadPath is a file's url_private_download path.
func downloadPath(f *File) string {
	return "/files-pri/" + TeamID + "-" + f.ID + "/download/" + url.PathEscape(f.Name)
}

// fileJSON is Slack's file object for f. The caller holds s.mu.
func (s *Server) fileJSON(f *File) map[string]any {
	base := s.httpSrv.URL
	var channels, ims []any
	if f.Channel != "" {
		if c, ok := s.channels[f.Channel]; ok && c.im {
			ims = append(ims, f.Channel)
		} else {
			channels = append(channels, f.Channel)
		}
	}
	return map[string]any{
		"id": f.ID, "created": f.Created, "timestamp": f.Created, "name": f.Name, "title": f.Title,
		"mimetype": f.Mimetype, "filetype": f.Filetype, "pretty_type": strings.ToUpper(f.Filetype),
		"user": f.User, "user_team": TeamID, "editable": false, "size": len(f.Content), "mode": "hosted",
		"is_external": false, "external_type": "", "is_public": len(channels) > 0, "public_url_shared": false,
		"display_as_bot": false, "username": "",
		"url_private":          base + "/files-pri/" + TeamID + "-" + f.ID + "/" + url.PathEscape(f.Name),
		"url_private_download": base + downloadPath(f),
		"permalink":            base + "/files/" + f.User + "/" + f.ID + "/" + url.PathEscape(f.Name),
		"permalink_public":     "https://slack-files.com/" + TeamID + "-" + f.ID,
		"comments_count":       0, "is_starred": false, "shares": map[string]any{},
		"channels": orEmpty(channels), "groups": []any{}, "ims": orEmpty(ims),
		"has_rich_preview": false, "file_access": "visible",
	}
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// filesInfo serves files.info.
func (s *Server) filesInfo(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.files[req.params["file"]]
	if !ok || !f.Completed {
		return nil, errCode("file_not_found")
	}
	return map[string]any{"file": s.fileJSON(f), "comments": []any{}, "response_metadata": map[string]any{"next_cursor": ""}}, nil
}

// handleFileDownload serves url_private_download behind the bot token.
func (s *Server) handleFileDownload(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/"+TeamID+"-")
	id, _, _ := strings.Cut(rest, "/")
	header := r.Header.Get("Authorization")
	s.mu.Lock()
	f, ok := s.files[id]
	authorized := header == "Bearer "+s.botToken
	s.downloads.log = append(s.downloads.log, FileDownload{FileID: id, Authorized: authorized, Header: header})
	redirect := s.downloads.redirect
	var content []byte
	if ok {
		content = f.Content
	}
	s.notifyLocked()
	s.mu.Unlock()
	switch {
	case !authorized:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in to your workspace</body></html>")
	case !ok:
		http.NotFound(w, r)
	case redirect != "":
		http.Redirect(w, r, redirect+r.URL.Path, http.StatusFound)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(content)
	}
}

// fileInputState fills a file_input's state with the file objects of the
// files it names by id, as Slack's view_submission carries them.
func (s *Server) fileInputState(obj map[string]any) {
	if obj["type"] != "file_input" {
		return
	}
	files, _ := obj["files"].([]any)
	out := make([]any, 0, len(files))
	for _, x := range files {
		m, _ := x.(map[string]any)
		id, _ := m["id"].(string)
		if f, ok := s.files[id]; ok {
			out = append(out, s.fileJSON(f))
		}
	}
	obj["files"] = out
}

// FileInput is a file_input's value for SubmitView: the files by id
// (SubmitView sends their file objects, as Slack does).
func FileInput(ids ...string) slack.BlockAction {
	files := make([]slack.File, len(ids))
	for i, id := range ids {
		files[i] = slack.File{ID: id}
	}
	return slack.BlockAction{Type: "file_input", Files: files}
}

// PostUserMentionWithFiles posts a message as a user that @mentions the bot
// and shares the files fileIDs (uploaded with UploadUserFile), and delivers
// the app_mention event with its "files" array, waiting for its ack.
func (s *Server) PostUserMentionWithFiles(ctx context.Context, userID, channelID, threadTS, text string, fileIDs ...string) error {
	full := "<@" + BotUserID + "> " + text
	return s.postWithFiles(ctx, userID, channelID, threadTS, full, fileIDs, func(event map[string]any) {
		event["type"] = "app_mention"
	})
}

// PostUserMessageWithFiles posts a message as a user that shares the files
// fileIDs, and delivers the message event (subtype "file_share", with its
// "files" array), waiting for its ack.
func (s *Server) PostUserMessageWithFiles(ctx context.Context, userID, channelID, threadTS, text string, fileIDs ...string) error {
	return s.postWithFiles(ctx, userID, channelID, threadTS, text, fileIDs, func(event map[string]any) {
		event["type"], event["subtype"], event["upload"], event["display_as_bot"] = "message", "file_share", true, false
		event["channel_type"] = "channel"
		if s.channels[channelID].im {
			event["channel_type"] = "im"
		}
		if threadTS != "" {
			event["parent_user_id"] = BotUserID
			if parent, _ := s.findMessage(channelID, threadTS); parent != nil {
				event["parent_user_id"] = parent.User
			}
		}
	})
}

// postWithFiles stores a person's message sharing files and sends its
// event, shaped by shape. shape runs with s.mu held.
func (s *Server) postWithFiles(ctx context.Context, userID, channelID, threadTS, text string, fileIDs []string, shape func(map[string]any)) error {
	s.mu.Lock()
	if _, ok := s.channels[channelID]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("slackfake: unknown channel %s", channelID)
	}
	m := &Message{Channel: channelID, TS: s.nextTS(), ThreadTS: threadTS, User: userID, Text: text, FileIDs: fileIDs}
	files := make([]any, 0, len(fileIDs))
	for _, id := range fileIDs {
		f, ok := s.files[id]
		if !ok {
			s.mu.Unlock()
			return fmt.Errorf("slackfake: unknown file %s", id)
		}
		f.Channel, f.ThreadTS = channelID, threadTS
		if s.downloads.checkInfo {
			files = append(files, map[string]any{"id": f.ID, "mode": "file_access", "file_access": "check_file_info", "created": 0, "timestamp": 0, "user": ""})
			continue
		}
		files = append(files, s.fileJSON(f))
	}
	s.messages[channelID] = append(s.messages[channelID], m)
	event := map[string]any{
		"user": userID, "text": text, "ts": m.TS, "channel": channelID, "event_ts": m.TS, "team": TeamID,
		"client_msg_id": s.nextID("msg-"), "files": files, "upload": false,
	}
	if threadTS != "" {
		event["thread_ts"] = threadTS
	}
	shape(event)
	payload := s.eventCallback(event)
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return err
}
