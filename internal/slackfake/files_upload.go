package slackfake

// Files the bot uploads: files.getUploadURLExternal, the upload itself,
// files.completeUploadExternal.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

func (s *Server) filesGetUploadURLExternal(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	if p["filename"] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: filename")
	}
	n, err := strconv.Atoi(p["length"])
	if err != nil || n <= 0 {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: length")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID("F")
	s.files[id] = &File{ID: id, Name: p["filename"], DeclaredLength: n}
	s.fileOrder = append(s.fileOrder, id)
	return map[string]any{"upload_url": s.httpSrv.URL + "/upload/" + id, "file_id": id}, nil
}

// handleUpload receives the file body POSTed to an upload_url (multipart
// "file" field as slack-go sends it, or a raw body).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	var content []byte
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ctype == "multipart/form-data" {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, "missing file field", http.StatusBadRequest)
			return
		}
		content, err = io.ReadAll(io.LimitReader(f, maxBody))
		_ = f.Close()
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
	} else {
		var err error
		if content, err = io.ReadAll(io.LimitReader(r.Body, maxBody)); err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	f, ok := s.files[id]
	if ok {
		f.Content = content
	}
	s.calls = append(s.calls, Call{Method: "upload", Token: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		Params: map[string]string{"file_id": id}, At: s.now(), Status: http.StatusOK})
	s.notifyLocked()
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(content))
}

func (s *Server) filesCompleteUploadExternal(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p["files"]), &summaries); err != nil || len(summaries) == 0 {
		return nil, errCode("invalid_arguments", "[ERROR] files must be a JSON array")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chID := p["channel_id"]
	if chID == "" {
		chID, _, _ = strings.Cut(p["channels"], ",")
	}
	var c *channel
	if chID != "" {
		var e *apiError
		if c, e = s.postable(chID); e != nil {
			return nil, e
		}
	}
	out := make([]map[string]any, 0, len(summaries))
	ids := make([]string, 0, len(summaries))
	for _, sum := range summaries {
		f, ok := s.files[sum.ID]
		if !ok || f.Content == nil {
			return nil, errCode("file_not_found")
		}
		f.Title = sum.Title
		f.Title = cmp.Or(f.Title, f.Name)
		f.ThreadTS = p["thread_ts"]
		f.InitialComment = p["initial_comment"]
		f.Completed = true
		if c != nil {
			f.Channel = c.id
		}
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
		ids = append(ids, f.ID)
	}
	if c != nil {
		m := &Message{Channel: c.id, TS: s.nextTS(), ThreadTS: p["thread_ts"], User: BotUserID, BotID: BotID,
			Text: p["initial_comment"], FileIDs: ids}
		if b := p["blocks"]; b != "" {
			m.Blocks = json.RawMessage(b)
		}
		s.messages[c.id] = append(s.messages[c.id], m)
	}
	return map[string]any{"files": out}, nil
}
