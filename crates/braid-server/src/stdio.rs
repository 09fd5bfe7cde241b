//! MCP over stdio: rmcp's line transport, with the JSON-RPC batches of revision 2025-03-26
//! split before rmcp reads them and their answers joined after.
//!
//! rmcp reads one message per line. Revision 2025-03-26 requires a server to accept a batch (a
//! line holding an array of messages) and to answer it with one array. Between the process's
//! stdin/stdout and rmcp sit two pipes: lines that are not arrays pass through untouched; a
//! batch is checked (the session agreed on 2025-03-26, each item a message rmcp can read, no
//! `initialize`, no id twice), its messages go to rmcp one per line, and rmcp's answers to its
//! requests are held back until the last one is in, then written as one array line (in the
//! order they were answered, which JSON-RPC allows). A batch of notifications only gets no
//! answer; an item that is refused is answered in the batch's array; a batch refused as a whole
//! (another revision, empty) gets one error object, as over HTTP. A line that is not JSON is
//! ignored, array or not, as rmcp ignores one.
//!
//! Message lines longer than [`MAX_LINE_BYTES`] are dropped unread (and logged), on either pipe;
//! the client's is answered with an Invalid Request error of id `null`.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Notify};

use super::mcp::{self, Braid, BATCH_REVISION};

/// The longest message line read; longer ones are dropped unread (and logged).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Serves `server` over `input`/`output` (the process's stdin and stdout) until the input ends.
///
/// # Errors
/// When rmcp cannot start the session or the output cannot be written.
pub async fn serve<I, O>(server: Braid, input: I, output: O) -> anyhow::Result<()>
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, rmcp_output) = tokio::io::duplex(1 << 16);
    let batches = Arc::new(Shared::default());
    let (lines, to_write) = mpsc::unbounded_channel();
    let reading = tokio::spawn(inbound(BufReader::new(input), to_rmcp, lines.clone(), batches.clone()));
    tokio::spawn(from_rmcp(BufReader::new(rmcp_output), lines, batches));
    let writing = tokio::spawn(write_lines(to_write, output));
    let transport =
        rmcp::transport::async_rw::AsyncRwTransport::new_server(rmcp_in, rmcp_out).with_max_line_length(MAX_LINE_BYTES);
    let service = rmcp::serve_server(server, transport).await?;
    service.waiting().await?;
    reading.abort();
    writing.await??;
    Ok(())
}

/// What the two pipes share: the batches, and a signal when `initialize` is answered.
#[derive(Default)]
struct Shared {
    batches: Mutex<Batches>,
    initialized: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Batches> {
        self.batches.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits while an `initialize` is sent and not answered (a batch right behind it is read
    /// in the revision it agrees on).
    async fn initialized(&self) {
        loop {
            let answered = self.initialized.notified();
            if self.lock().initialize.is_none() {
                return;
            }
            answered.await;
        }
    }
}

/// The session's revision and the batches not answered yet.
#[derive(Default)]
struct Batches {
    /// The id of the `initialize` request, until its answer says the revision.
    initialize: Option<String>,
    /// The revision the session agreed on.
    revision: Option<String>,
    /// Batches waiting for rmcp's answers.
    open: Vec<Batch>,
}

/// One batch: the ids of its requests rmcp has not answered yet, and the answers so far.
struct Batch {
    waiting: HashSet<String>,
    replies: Vec<Value>,
}

impl Batches {
    /// The batch an answer with `id` completes a part of; the whole batch when it is complete.
    fn answer(&mut self, id: &str, reply: Value) -> Option<Option<Vec<Value>>> {
        let at = self.open.iter().position(|b| b.waiting.contains(id))?;
        let batch = &mut self.open[at];
        batch.waiting.remove(id);
        batch.replies.push(reply);
        if !batch.waiting.is_empty() {
            return Some(None);
        }
        Some(Some(self.open.remove(at).replies))
    }

    fn waits_for(&self, id: &str) -> bool {
        self.open.iter().any(|b| b.waiting.contains(id))
    }
}

/// A message's id as a key (JSON text, so `1` and `"1"` differ, as in JSON-RPC).
fn key(id: &Value) -> String {
    id.to_string()
}

/// Reads the client's lines: messages go on to rmcp, batches are split (see the module docs),
/// and what is refused before rmcp sees it goes to `direct`.
async fn inbound<R, W>(mut input: R, mut to_rmcp: W, direct: mpsc::UnboundedSender<Vec<u8>>, batches: Arc<Shared>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line).await {
            Ok(Line::End) | Err(_) => return,
            Ok(Line::TooLong) => {
                tracing::warn!("MCP over stdio: a message line over {MAX_LINE_BYTES} bytes was dropped");
                // Answered, so that a client waiting on the message's reply is not left waiting
                // (its id was in the part not read).
                let why = format!("a message line over {MAX_LINE_BYTES} bytes is not read");
                let _ = direct.send(mcp::error(Value::Null, ErrorCode::INVALID_REQUEST, why).to_string().into_bytes());
                continue;
            }
            Ok(Line::Read) => {}
        }
        let forward = match mcp::batch_items(&line) {
            None => {
                note_initialize(&line, &batches);
                vec![std::mem::take(&mut line)]
            }
            // A line that is not JSON is ignored, as rmcp ignores one that is not an array.
            Some(Err(refused)) if refused["error"]["code"] == ErrorCode::PARSE_ERROR.0 => continue,
            Some(items) => {
                batches.initialized().await;
                match split(items, &batches) {
                    Ok(messages) => messages,
                    Err(refused) => {
                        let _ = direct.send(refused.to_string().into_bytes());
                        continue;
                    }
                }
            }
        };
        for mut message in forward {
            message.push(b'\n');
            if to_rmcp.write_all(&message).await.is_err() || to_rmcp.flush().await.is_err() {
                return;
            }
        }
    }
}

/// Remembers the id of an `initialize` request, whose answer says the session's revision.
fn note_initialize(line: &[u8], batches: &Shared) {
    #[derive(serde::Deserialize)]
    struct Head {
        id: Option<Value>,
        method: Option<String>,
    }
    if let Ok(Head { id: Some(id), method: Some(method) }) = serde_json::from_slice::<Head>(line) {
        if method == "initialize" {
            batches.lock().initialize = Some(key(&id));
        }
    }
}

/// A batch's messages, one line each for rmcp, its requests registered as waiting; or the one
/// answer refusing the whole batch. Refused items are answered in the batch's array.
fn split(items: Result<Vec<Value>, Value>, batches: &Shared) -> Result<Vec<Vec<u8>>, Value> {
    let items = items?;
    let mut batches = batches.lock();
    match batches.revision.as_deref() {
        Some(BATCH_REVISION) => {}
        Some(other) => {
            let why = format!("JSON-RPC batches are not part of MCP {other}: send one message per request");
            return Err(mcp::error(Value::Null, ErrorCode::INVALID_REQUEST, why));
        }
        None => {
            let why = "a batch before the session is initialized: send `initialize` on its own first";
            return Err(mcp::error(Value::Null, ErrorCode::INVALID_REQUEST, why));
        }
    }
    let mut messages = Vec::new();
    let mut batch = Batch { waiting: HashSet::new(), replies: Vec::new() };
    for item in items {
        let id = item.get("id").cloned();
        let request = item.get("method").is_some() && id.is_some();
        let refuse = |why: &str| mcp::error(id.clone().unwrap_or(Value::Null), ErrorCode::INVALID_REQUEST, why);
        if item.get("method").and_then(Value::as_str) == Some("initialize") {
            batch.replies.push(refuse("initialize must not be part of a batch"));
        } else if serde_json::from_value::<ClientJsonRpcMessage>(item.clone()).is_err() {
            batch.replies.push(refuse("not a JSON-RPC message"));
        } else if request
            && id.as_ref().is_some_and(|id| batch.waiting.contains(&key(id)) || batches.waits_for(&key(id)))
        {
            batch.replies.push(refuse("this id is already waiting for an answer"));
        } else {
            if let (true, Some(id)) = (request, &id) {
                batch.waiting.insert(key(id));
            }
            messages.push(item.to_string().into_bytes());
        }
    }
    if batch.waiting.is_empty() {
        if !batch.replies.is_empty() {
            return Err(Value::Array(batch.replies));
        }
    } else {
        batches.open.push(batch);
    }
    Ok(messages)
}

/// Reads rmcp's lines and sends them to `out`, holding a batch's answers back until the
/// batch is complete; notes the revision `initialize` agreed on.
async fn from_rmcp<R: AsyncBufRead + Unpin>(mut input: R, out: mpsc::UnboundedSender<Vec<u8>>, batches: Arc<Shared>) {
    let mut line = Vec::new();
    loop {
        match read_line(&mut input, &mut line).await {
            Ok(Line::End) | Err(_) => return,
            Ok(Line::TooLong) => continue,
            Ok(Line::Read) => {}
        }
        let send = match answered(&line, &batches) {
            Answered::Pass => std::mem::take(&mut line),
            Answered::Held => continue,
            Answered::Batch(replies) => Value::Array(replies).to_string().into_bytes(),
        };
        if out.send(send).is_err() {
            return;
        }
    }
}

/// Writes every line sent to `lines` to `output`, until no one can send any more.
async fn write_lines<O: AsyncWrite + Unpin>(
    mut lines: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: O,
) -> std::io::Result<()> {
    while let Some(line) = lines.recv().await {
        output.write_all(&line).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
    }
    Ok(())
}

enum Answered {
    /// Not an answer to a batch's request: written as it is.
    Pass,
    /// Part of a batch still waiting for other answers.
    Held,
    /// The last answer of a batch: the batch's whole array.
    Batch(Vec<Value>),
}

/// What to do with one of rmcp's lines.
fn answered(line: &[u8], batches: &Shared) -> Answered {
    let Ok(message) = serde_json::from_slice::<Value>(line) else { return Answered::Pass };
    let Some(id) = message.get("id").filter(|_| message.get("method").is_none()).map(key) else {
        return Answered::Pass;
    };
    let mut open = batches.lock();
    if open.initialize.as_deref() == Some(id.as_str()) {
        open.initialize = None;
        open.revision = message.pointer("/result/protocolVersion").and_then(Value::as_str).map(str::to_string);
        batches.initialized.notify_waiters();
    }
    match open.answer(&id, message) {
        None => Answered::Pass,
        Some(None) => Answered::Held,
        Some(Some(replies)) => Answered::Batch(replies),
    }
}

enum Line {
    Read,
    TooLong,
    End,
}

/// Reads one line (without its end) into `line`, at most [`MAX_LINE_BYTES`]; a longer line is
/// skipped to its end. A last line without an end counts.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<Line> {
    line.clear();
    let limit = MAX_LINE_BYTES as u64 + 1;
    let read = (&mut *input).take(limit).read_until(b'\n', line).await?;
    if read == 0 {
        return Ok(Line::End);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        return Ok(Line::Read);
    }
    if line.len() < limit as usize {
        return Ok(Line::Read);
    }
    // Over the limit: skip the rest of the line in bounded pieces.
    loop {
        line.clear();
        let read = (&mut *input).take(limit).read_until(b'\n', line).await?;
        if read == 0 || line.last() == Some(&b'\n') {
            line.clear();
            return Ok(Line::TooLong);
        }
    }
}
