"""The gateway both deployments share: websockets, HTTP, fan-out, projections and one lifecycle."""
