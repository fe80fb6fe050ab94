"""The live layer: deltas from services and workers to WebSocket clients."""
