"""Stateless paging cursors for every list result.

A cursor is base64url of JSON `{"q": sha256(query + parameters), "o": offset, "l": limit}`.
`encode_cursor(params, offset, limit)` makes one; `decode_cursor(cursor, params)` checks
that it belongs to the same query and parameters and returns (offset, limit). Nothing
is stored on the server, so results may shift if the index changes between pages.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from ctxd.indexer.errors import InvalidCursor


def query_hash(params: Mapping[str, Any]) -> str:
    """sha256 of the query and its parameters (canonical JSON, paging fields excluded)."""
    canon = json.dumps(
        {k: v for k, v in params.items() if k not in ("cursor", "limit", "offset")},
        sort_keys=True,
        default=str,
        separators=(",", ":"),
    )
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def encode_cursor(params: Mapping[str, Any], offset: int, limit: int) -> str:
    payload = {"q": query_hash(params), "o": offset, "l": limit}
    raw = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str, params: Mapping[str, Any]) -> tuple[int, int]:
    """(offset, limit) from a cursor made for the same query and parameters.

    Raises:
        InvalidCursor: malformed, or made for another query.
    """
    hint = "Repeat the search without a cursor to start from the first page."
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        q, offset, limit = payload["q"], int(payload["o"]), int(payload["l"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError) as exc:
        raise InvalidCursor(
            f"Invalid cursor: {cursor[:40]!r} is not a cursor this server made.",
            hint=hint,
            details={"field": "cursor"},
        ) from exc
    if q != query_hash(params):
        raise InvalidCursor(
            "Invalid cursor: it belongs to a different query or different parameters.",
            hint=hint,
            details={"field": "cursor"},
        )
    if offset < 0 or limit < 1:
        raise InvalidCursor("Invalid cursor: bad offset or limit.", hint=hint,
                            details={"field": "cursor"})
    return offset, limit


def with_offset(cursor: str, offset: int, limit: int | None = None) -> str:
    """The same cursor (same query hash, and page size unless `limit` is given) pointing
    at another `offset`.

    Used when a page is cut short (e.g. by a token budget): the continuation starts
    inside the page and keeps the page size the caller asked for. A malformed cursor is
    returned unchanged (decoding reports it).
    """
    try:
        payload = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        payload["o"] = int(offset)
        if limit is not None:
            payload["l"] = int(limit)
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        return cursor
    raw = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")
