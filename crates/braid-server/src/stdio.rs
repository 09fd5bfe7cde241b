//! MCP over stdio for local clients: newline-delimited JSON-RPC on stdin and stdout, the same
//! protocol handler and tools as `/mcp`. Nothing but MCP messages goes to stdout; logs go to
//! stderr.
//!
//! Lines are read in a streaming way with a bound: at most [`MAX_LINE_BYTES`] of a line are
//! ever held. A longer line is answered with a parse error as soon as the bound is passed, and
//! the rest of it is then skipped without being kept.

use std::io::{BufRead, Write};

use anyhow::Result;
use serde_json::Value;

use super::mcp::{self, Mcp, Reply};
use super::memory::Who;

/// The longest message line read; longer ones are answered with a parse error.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What [`next_line`] found.
#[derive(Debug, PartialEq)]
enum Line {
    /// A whole line (without its newline) in the buffer.
    Complete,
    /// A line over the bound: the buffer holds its first bytes; the rest is still unread.
    TooLong,
    /// End of input (a last line without a newline counts as complete before it).
    End,
}

/// Reads the next line into `buf` (cleared first), holding at most `max` bytes of it.
fn next_line(input: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if buf.is_empty() { Line::End } else { Line::Complete });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if buf.len() + chunk.len() > max {
            let keep = max - buf.len();
            buf.extend_from_slice(&chunk[..keep]);
            input.consume(keep);
            return Ok(Line::TooLong);
        }
        buf.extend_from_slice(chunk);
        let used = found.unwrap_or(chunk.len());
        input.consume(used);
        if found.is_some() {
            return Ok(Line::Complete);
        }
    }
}

fn write_reply(output: &mut impl Write, reply: Reply) -> Result<()> {
    let text = match reply {
        Reply::Nothing => return Ok(()),
        Reply::One(v) => serde_json::to_string(&v)?,
        Reply::Batch(vs) => serde_json::to_string(&vs)?,
    };
    // serde_json escapes newlines inside strings, so one message is one line.
    writeln!(output, "{text}")?;
    output.flush()?;
    Ok(())
}

/// Serves `mcp` as `who` until stdin closes.
///
/// # Errors
/// When stdin or stdout fails.
pub fn run(mcp: &Mcp, who: Who<'_>, input: impl BufRead, output: impl Write) -> Result<()> {
    run_bounded(mcp, who, input, output, MAX_LINE_BYTES)
}

fn run_bounded(mcp: &Mcp, who: Who<'_>, mut input: impl BufRead, mut output: impl Write, max: usize) -> Result<()> {
    // A legacy stdio connection is one session: the revision initialize agreed on holds for the
    // rest. A 2026-07-28 request names its revision itself.
    let mut version = None;
    let mut buf = Vec::new();
    loop {
        match next_line(&mut input, &mut buf, max)? {
            Line::End => return Ok(()),
            Line::TooLong => {
                let error = mcp::error(Value::Null, mcp::PARSE_ERROR, format!("message over {max} bytes"));
                write_reply(&mut output, Reply::One(error))?;
                // The rest of the line, up to and including its newline, is read and dropped.
                input.skip_until(b'\n')?;
            }
            Line::Complete => {
                let line = String::from_utf8_lossy(&buf);
                if line.trim().is_empty() {
                    continue;
                }
                let reply = match serde_json::from_str::<Value>(&line) {
                    Err(e) => Reply::One(mcp::error(Value::Null, mcp::PARSE_ERROR, format!("parse error: {e}"))),
                    Ok(payload) => {
                        let outcome = mcp.handle_stdio(payload, version, who);
                        version = outcome.negotiated.or(version);
                        outcome.reply
                    }
                };
                write_reply(&mut output, reply)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use braid::Principal;

    use super::*;

    /// Bytes read from the stream so far, shared between the input and the output.
    type Count = Arc<AtomicUsize>;

    /// A line of `len` bytes of `a`, then a newline and a `ping`.
    struct HugeLine {
        len: usize,
        sent: Count,
        tail: Vec<u8>,
    }

    impl Read for HugeLine {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let sent = self.sent.load(Ordering::SeqCst);
            let n = if sent < self.len {
                let n = out.len().min(self.len - sent);
                out[..n].fill(b'a');
                n
            } else {
                let at = sent - self.len;
                let n = out.len().min(self.tail.len().saturating_sub(at));
                out[..n].copy_from_slice(&self.tail[at..at + n]);
                n
            };
            self.sent.fetch_add(n, Ordering::SeqCst);
            Ok(n)
        }
    }

    /// Records, for each reply line, how many input bytes had been read when it was written.
    struct Replies {
        sent: Count,
        at: Vec<usize>,
        text: Vec<u8>,
    }

    impl Write for Replies {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            for _ in b.iter().filter(|&&c| c == b'\n') {
                self.at.push(self.sent.load(Ordering::SeqCst));
            }
            self.text.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn engine() -> Mcp {
        let index = braid::Index::create_in_ram(braid::IndexConfig::default()).unwrap();
        Mcp::new(std::sync::Arc::new(super::super::api::Engine::new(index, 10)))
    }

    #[test]
    fn an_over_long_line_is_refused_before_it_is_read_whole() {
        let sent = Count::default();
        let max = 1024 * 1024;
        let len = 16 * max;
        let input = HugeLine {
            len,
            sent: Arc::clone(&sent),
            tail: b"\n{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n".to_vec(),
        };
        let mut replies = Replies { sent: Arc::clone(&sent), at: Vec::new(), text: Vec::new() };
        run_bounded(&engine(), Who::from(&Principal::public()), BufReader::new(input), &mut replies, max).unwrap();
        let text = String::from_utf8(replies.text).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["error"]["code"], mcp::PARSE_ERROR, "{text}");
        // The refusal came when the bound was passed, not after the 16 MiB line was read.
        assert!(replies.at[0] <= max + 64 * 1024, "answered after reading {} bytes", replies.at[0]);
        // The rest of the line was skipped, and the next message is answered.
        assert_eq!(lines[1]["id"], 7, "{text}");
        assert!(lines[1]["result"].is_object(), "{text}");
    }

    #[test]
    fn lines_are_split_whatever_the_read_sizes() {
        let mut input = std::io::BufReader::with_capacity(3, &b"ab\n\ncdefgh\nlast"[..]);
        let mut buf = Vec::new();
        assert_eq!(next_line(&mut input, &mut buf, 100).unwrap(), Line::Complete);
        assert_eq!(buf, b"ab");
        assert_eq!(next_line(&mut input, &mut buf, 100).unwrap(), Line::Complete);
        assert!(buf.is_empty());
        assert_eq!(next_line(&mut input, &mut buf, 4).unwrap(), Line::TooLong);
        assert_eq!(buf, b"cdef");
        input.skip_until(b'\n').unwrap();
        assert_eq!(next_line(&mut input, &mut buf, 100).unwrap(), Line::Complete);
        assert_eq!(buf, b"last");
        assert_eq!(next_line(&mut input, &mut buf, 100).unwrap(), Line::End);
    }
}
