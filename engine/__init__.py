"""The turn engine: turns/ runs them, upstream/ calls the model, events/ logs and replays
what clients see, store/ persists every write in short transactions."""
