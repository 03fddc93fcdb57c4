"""The HTTP host: an HTTP/1.1 server on httptools serving the WSGI app and its streams."""
