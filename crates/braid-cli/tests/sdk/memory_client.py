"""Drives the memory tools of `braid serve` with the official MCP Python SDK.

Usage:
  memory_client.py --http URL --token TOKEN

remember -> recall -> update -> recall -> forget -> recall, in the SDK's `auto` mode.
Prints one JSON object with what each step returned.
Run by crates/braid-cli/tests/mcp_sdk.rs; exits non-zero on any SDK error.
"""

import argparse
import asyncio
import json

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client


async def run(args: argparse.Namespace) -> dict:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {args.token}"}, timeout=60)
    try:
        async with Client(streamable_http_client(args.http, http_client=http), mode="auto") as client:

            async def call(name: str, arguments: dict) -> dict:
                result = await client.call_tool(name, arguments)
                if result.is_error:
                    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
                    raise SystemExit(f"{name} failed: {text}")
                return result.structured_content

            remembered = await call("remember", {"text": "The staging database is on port 5544", "kind": "fact", "importance": 7})
            first_id = remembered["memory"]["id"]
            recalled = await call("recall", {"query": "staging database port"})
            updated = await call("update", {"id": first_id, "text": "The staging database moved to port 6655"})
            new_id = updated["memory"]["id"]
            after_update = await call("recall", {"query": "staging database port"})
            forgotten = await call("forget", {"id": new_id})
            after_forget = await call("recall", {"query": "staging database port"})
            return {
                "protocol_version": client.protocol_version,
                "remembered": remembered,
                "recalled": [m["text"] for m in recalled["memories"]],
                "updated": updated,
                "after_update": [m["text"] for m in after_update["memories"]],
                "forgotten": forgotten["ids"],
                "after_forget": after_forget["memories"],
            }
    finally:
        await http.aclose()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--http", required=True)
    p.add_argument("--token", required=True)
    print(json.dumps(asyncio.run(run(p.parse_args()))))


if __name__ == "__main__":
    main()
