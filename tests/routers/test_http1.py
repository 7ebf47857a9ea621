"""HTTP/1.1 framing, fed byte streams directly."""

from __future__ import annotations

import asyncio

import pytest

from headway.routers.dataplane import http1


def reader_of(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def test_chunked_body_is_read_whole_with_trailers_and_framing_kept() -> None:
    body = b"4\r\nwiki\r\n5;ext=1\r\npedia\r\n0\r\nx-trailer: 1\r\n\r\n"
    reader = reader_of(body + b"GET /next HTTP/1.1\r\n\r\n")
    assert await http1.read_raw_body(reader, http1.Framing("chunked")) == body
    assert await http1.read_head(reader) == b"GET /next HTTP/1.1\r\n\r\n"


async def test_clean_end_of_stream_is_no_head_but_a_cut_head_is_an_error() -> None:
    assert await http1.read_head(reader_of(b"")) is None
    with pytest.raises(http1.BadMessage, match="middle"):
        await http1.read_head(reader_of(b"GET / HTTP/1.1\r\nhost"))


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ([("content-length", "3"), ("transfer-encoding", "chunked")], "both"),
        ([("content-length", "3"), ("content-length", "4")], "invalid Content-Length"),
        ([("content-length", "-1")], "invalid Content-Length"),
        ([("transfer-encoding", "gzip")], "unsupported"),
    ],
)
def test_ambiguous_request_framing_is_refused(headers: list[tuple[str, str]], problem: str) -> None:
    head = http1.MessageHead(("POST", "/", "HTTP/1.1"), tuple(headers))
    with pytest.raises(http1.BadMessage, match=problem):
        http1.request_framing(head)


def test_response_framing_follows_method_and_status() -> None:
    def framing(status: str, headers: tuple[tuple[str, str], ...], method: str = "GET") -> str:
        head = http1.MessageHead(("HTTP/1.1", status, "x"), headers)
        return http1.response_framing(head, request_method=method).kind

    assert framing("200", (("content-length", "5"),)) == "length"
    assert framing("200", (("transfer-encoding", "chunked"),)) == "chunked"
    assert framing("200", ()) == "close"
    assert framing("204", ()) == "none"
    assert framing("200", (("content-length", "5"),), method="HEAD") == "none"


def test_malformed_header_line_is_refused() -> None:
    with pytest.raises(http1.BadMessage, match="malformed header"):
        http1.parse_head(b"GET / HTTP/1.1\r\nno colon here\r\n\r\n")


async def test_endless_chunk_size_line_is_refused() -> None:
    reader = reader_of(b"1" * 70_000 + b"\r\n")
    with pytest.raises(http1.BadMessage, match="too long"):
        await http1.read_raw_body(reader, http1.Framing("chunked"))
