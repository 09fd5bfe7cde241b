//! MCP over stdio for local clients: newline-delimited JSON-RPC on stdin and stdout, the same
//! protocol handler and tools as `/mcp`. Nothing but MCP messages goes to stdout; logs go to
//! stderr.

use std::io::{BufRead, Write};

use anyhow::Result;
use braid::Principal;
use serde_json::Value;

use super::mcp::{self, Mcp, Reply};

/// The longest message line read; longer ones are answered with a parse error.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Serves `mcp` as `principal` until stdin closes.
///
/// # Errors
/// When stdin or stdout fails.
pub fn run(mcp: &Mcp, principal: &Principal, input: impl BufRead, mut output: impl Write) -> Result<()> {
    // A legacy stdio connection is one session: the revision initialize agreed on holds for the
    // rest. A 2026-07-28 request names its revision itself.
    let mut version = None;
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = if line.len() > MAX_LINE_BYTES {
            Reply::One(mcp::error(Value::Null, mcp::PARSE_ERROR, format!("message over {MAX_LINE_BYTES} bytes")))
        } else {
            match serde_json::from_str::<Value>(&line) {
                Err(e) => Reply::One(mcp::error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}"))),
                Ok(payload) => {
                    let outcome = mcp.handle_stdio(payload, version, principal);
                    version = outcome.negotiated.or(version);
                    outcome.reply
                }
            }
        };
        let text = match reply {
            Reply::Nothing => continue,
            Reply::One(v) => serde_json::to_string(&v)?,
            Reply::Batch(vs) => serde_json::to_string(&vs)?,
        };
        // serde_json escapes newlines inside strings, so one message is one line.
        writeln!(output, "{text}")?;
        output.flush()?;
    }
    Ok(())
}
