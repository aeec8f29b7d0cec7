"""The agent: from a ChannelMessage to a reply (commands, history, prompt, tool loop)."""
