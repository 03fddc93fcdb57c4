"""Client events: per-turn logs (in-process or Redis) and replay from storage."""
