package bot

// DisplayedText joins every displayed text (text objects' "text") of blocks
// given as JSON, for the tests of package bot_test.
func DisplayedText(blocksJSON []byte) string { return displayedText(blocksJSON) }
