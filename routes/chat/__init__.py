"""Chats: sessions, their turns and event streams, the one-request chat and the AI SDK's chat
endpoints; their request and response schemas beside them."""
