package slackfake

import "slices"

// filesDelete serves files.delete: the file is gone (Files no longer lists
// it) and the messages that shared it no longer do; a message left with
// neither a file nor text (an upload without a comment) is removed, as
// Slack removes a file share whose file is deleted.
func (s *Server) filesDelete(req *apiRequest) (map[string]any, *apiError) {
	id := req.params["file"]
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.files[id]; !ok {
		return nil, errCode("file_not_found")
	}
	delete(s.files, id)
	s.fileOrder = slices.DeleteFunc(s.fileOrder, func(f string) bool { return f == id })
	for ch, msgs := range s.messages {
		s.messages[ch] = slices.DeleteFunc(msgs, func(m *Message) bool {
			if !slices.Contains(m.FileIDs, id) {
				return false
			}
			m.FileIDs = slices.DeleteFunc(m.FileIDs, func(f string) bool { return f == id })
			return len(m.FileIDs) == 0 && m.Text == "" && len(m.Blocks) == 0
		})
	}
	return map[string]any{}, nil
}
