"""The shell around the core: journal, processor, fan-out hub and HTTP/websocket gateway."""
