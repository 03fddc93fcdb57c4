"""The offline demo model: answers finance questions with real tools over the real wire format."""
