"""The ASGI server: Flask answers every route; the event loop carries every stream."""
