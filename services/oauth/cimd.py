"""Client ID metadata documents: an app's https URL is its client_id, and the document there
says its name and redirect URIs. Fetched behind an SSRF guard: https only, every address the
name resolves to public (loopback only with CIMD_ALLOW_LOOPBACK), the connection made to the
address that was checked, no redirects, at most MAX_BYTES within the `cimd_fetch` deadline.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx2

from models.connector import CLIENT_ID_CHARS

# The draft and the MCP spec suggest documents stay within a few kilobytes.
MAX_BYTES = 5 * 1024
GRANT_TYPES = ("authorization_code", "refresh_token")
MAX_REDIRECTS = 10
MAX_URI_CHARS = 2000
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)
_NO_CACHE = re.compile(r"(?:^|,)\s*(?:no-store|no-cache)\s*(?:,|$)", re.IGNORECASE)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


class ClientRefused(Exception):
    """A client's metadata cannot be used; the message says why (an OAuth error description)."""


@dataclass(frozen=True)
class Fetched:
    """A fetched document and how long it may be kept (None: the response did not say)."""

    document: dict[str, Any]
    max_age: float | None


def is_document_url(client_id: str) -> bool:
    """True when a client_id names a metadata document rather than a registration of ours."""
    return client_id.startswith("https://")


def check_url(url: str) -> SplitResult:
    """The parts of a client_id URL the draft allows: https, a host, a path, nothing else."""
    if len(url) > CLIENT_ID_CHARS:
        raise ClientRefused(f"A client_id URL has at most {CLIENT_ID_CHARS} characters.")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise ClientRefused("The client_id is not a valid URL.") from err
    segments = parts.path.split("/")
    if (
        parts.scheme != "https"
        or not parts.hostname
        or parts.path in ("", "/")
        or parts.fragment
        or parts.username is not None
        or "." in segments
        or ".." in segments
        or (port is not None and not 0 < port < 65536)
    ):
        raise ClientRefused(
            "A client_id URL is https with a host and a path, and no fragment, credentials "
            "or dot segments."
        )
    return parts


def redirect_allowed(uri: str) -> bool:
    """A redirect URI the MCP spec allows: https, or http to this machine (loopback)."""
    if not isinstance(uri, str) or len(uri) > MAX_URI_CHARS:
        return False
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    if parts.fragment or not parts.hostname:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)


def check_metadata(meta: dict[str, Any], *, document: bool) -> dict[str, Any]:
    """The fields we keep of a document or a registration, checked: redirect URIs, grant
    types, a public client's auth method (a document can hold no secret)."""
    uris = meta.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECTS:
        raise ClientRefused(f"redirect_uris must list 1 to {MAX_REDIRECTS} URIs.")
    bad = [u for u in uris if not redirect_allowed(u)]
    if bad:
        raise ClientRefused(
            f"Redirect URIs must use https, or http to localhost: {str(bad[0])[:200]!r} does not."
        )
    grants = meta.get("grant_types") or ["authorization_code"]
    if not isinstance(grants, list) or not set(grants) <= set(GRANT_TYPES):
        raise ClientRefused(f"grant_types may hold only {', '.join(GRANT_TYPES)}.")
    responses = meta.get("response_types") or ["code"]
    if not isinstance(responses, list) or responses != ["code"]:
        raise ClientRefused('response_types may hold only "code".')
    method = meta.get("token_endpoint_auth_method") or ("none" if document else None)
    allowed = ("none",) if document else ("none", "client_secret_post", "client_secret_basic")
    if method is None:
        method = "client_secret_basic"  # RFC 7591's default
    if method not in allowed:
        raise ClientRefused(f"token_endpoint_auth_method must be one of {', '.join(allowed)}.")
    if document and ("client_secret" in meta or "client_secret_expires_at" in meta):
        raise ClientRefused("A client ID metadata document holds no client secret.")
    name = meta.get("client_name")
    if document and not (isinstance(name, str) and name.strip()):
        raise ClientRefused("A client ID metadata document names its client (client_name).")
    if name is not None and not isinstance(name, str):
        raise ClientRefused("client_name must be text.")
    return {
        "name": (name or "").strip()[:200],
        "redirect_uris": list(uris),
        "grant_types": list(grants),
        "token_endpoint_auth_method": method,
    }


def validate_document(url: str, document: dict[str, Any]) -> dict[str, Any]:
    """The fields we keep of a fetched document, once it is the document of `url`."""
    if document.get("client_id") != url:
        raise ClientRefused("The document's client_id is not the URL it was fetched from.")
    return check_metadata(document, document=True)


def _address_allowed(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_loopback: bool
) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return allow_loopback
    return address.is_global and not address.is_multicast


async def _resolve(host: str, port: int, allow_loopback: bool) -> str:
    """The address to connect to: every address `host` resolves to must be allowed."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise ClientRefused(f"The client_id's host {host!r} does not resolve.") from err
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses or not all(_address_allowed(a, allow_loopback) for a in addresses):
        raise ClientRefused(f"The client_id's host {host!r} is not a public address.")
    return str(addresses[0])


async def fetch(url: str, *, allow_loopback: bool, deadline: float) -> Fetched:
    """Fetch the document at `url` within `deadline` seconds (ClientRefused: why not)."""
    parts = check_url(url)
    host, port = parts.hostname or "", parts.port or 443
    try:
        async with asyncio.timeout(deadline):
            address = await _resolve(host, port, allow_loopback)
            shown = f"[{address}]" if ":" in address else address
            target = urlunsplit(("https", f"{shown}:{port}", parts.path, parts.query, ""))
            return await _get(target, parts.netloc, host, deadline)
    except TimeoutError as err:
        raise ClientRefused("The client ID metadata document did not arrive in time.") from err


async def _get(target: str, netloc: str, host: str, deadline: float) -> Fetched:
    # The system's trust store (SSL_CERT_FILE overrides it); the name checked is the host's.
    context = ssl.create_default_context()
    headers = {"Host": netloc, "Accept": "application/json", "Accept-Encoding": "identity"}
    async with httpx2.AsyncClient(
        verify=context, follow_redirects=False, timeout=deadline, trust_env=False
    ) as client:
        try:
            async with client.stream(
                "GET", target, headers=headers, extensions={"sni_hostname": host}
            ) as response:
                if response.status_code != 200:
                    raise ClientRefused(
                        f"The client ID metadata document answered {response.status_code}."
                    )
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > MAX_BYTES:
                        raise ClientRefused(
                            f"The client ID metadata document is over {MAX_BYTES} bytes."
                        )
                cache = response.headers.get("cache-control", "")
        except httpx2.HTTPError as err:
            raise ClientRefused(
                f"The client ID metadata document cannot be fetched ({type(err).__name__})."
            ) from err
    try:
        document = json.loads(bytes(body))
    except ValueError as err:
        raise ClientRefused("The client ID metadata document is not JSON.") from err
    if not isinstance(document, dict):
        raise ClientRefused("The client ID metadata document is not a JSON object.")
    return Fetched(document, _max_age(cache))


def _max_age(cache_control: str) -> float | None:
    if _NO_CACHE.search(cache_control):
        return 0.0
    found = _MAX_AGE.search(cache_control)
    return float(found.group(1)) if found else None
