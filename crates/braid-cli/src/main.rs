//! `braid`: index documents, search them, measure search quality, and serve them over HTTP
//! and MCP.

mod commands;
mod output;
mod vectors;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Hybrid retrieval from the command line.
#[derive(Parser)]
#[command(name = "braid", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Index a BEIR corpus.jsonl (or the folder holding it) or a folder of Markdown/text files.
    /// A sync: afterwards the index holds exactly the records of the input's current documents
    /// (records with the same id are replaced, unchanged ones skipped, and every record no
    /// document holds deleted, records written over the server included, agent memories
    /// excepted, unless --no-prune). A document that cannot be read (bad front matter or ACL),
    /// two documents with one record id, or an input with no documents at all (unless
    /// --no-prune) fails the run before anything is written.
    Index {
        /// corpus.jsonl, a folder holding it, or a folder of .md/.txt files.
        input: PathBuf,
        /// The index directory (created when missing).
        #[arg(long)]
        index: PathBuf,
        /// Visibility of records without ACL tokens, for a new index (by default, public). Given
        /// for an existing index with another policy, it is an error.
        #[arg(long, value_enum)]
        policy: Option<Policy>,
        /// How a new index holds its vectors: `f32` (the default) or `int8` (one byte a
        /// dimension plus a scale per vector, about a quarter of the memory). Given for an
        /// existing index with another setting, it is an error.
        #[arg(long)]
        quantize: Option<braid::Quantization>,
        /// How a new index cuts long records into passages for the embedder, one vector each,
        /// a record scoring by its best: `WORDS[:STRIDE[:MAX]]` (words a window, words between
        /// window starts, passages a record at most), or `off` for one vector a record. By
        /// default 128:96:16. Given for an existing index with another setting, it is an error.
        #[arg(long)]
        passages: Option<commands::PassagesArg>,
        /// Keep records no document of the input holds (ingest without syncing, for example
        /// several folders into one index), but for sections a Markdown article of the input
        /// no longer has. Without it, such records are deleted, records written over the
        /// server included (agent memories are kept).
        #[arg(long)]
        no_prune: bool,
        /// Embed records with this ONNX model directory (`default`: all-MiniLM-L6-v2, found by
        /// discovery; `hf:<owner>/<name>`: downloaded from the Hugging Face hub; a path to an
        /// `.onnx` file: that file of its directory, e.g. `model_int8.onnx`) so the semantic
        /// leg can run.
        #[arg(long)]
        model: Option<String>,
        /// Commit every this many records (each commit bounds the writer's memory; a killed
        /// run resumes after the last one).
        #[arg(long, default_value_t = commands::DEFAULT_COMMIT_EVERY)]
        commit_every: usize,
        /// Give a tenant partitions of its own (lexical index, vector store and graph) once it
        /// holds this many records (by default 10,000). It changes what a search costs and
        /// reads, never what it finds; a tenant already promoted stays promoted.
        #[arg(long)]
        promote_tenants_at: Option<usize>,
        /// The records' own vectors: a `.npy` file (2-D float32) or raw little-endian f32
        /// (with --vector-dim), row i being the vector of the i-th id in --vector-ids. With
        /// no --model, the semantic leg then runs on query vectors only.
        #[arg(long, requires = "vector_ids", conflicts_with = "vector_field")]
        vectors: Option<PathBuf>,
        /// The ids of --vectors' rows, one per line.
        #[arg(long, requires = "vectors")]
        vector_ids: Option<PathBuf>,
        /// Dimensions of a raw f32 --vectors file.
        #[arg(long, requires = "vectors")]
        vector_dim: Option<usize>,
        /// Read each JSONL document's vector from this field of its `metadata`.
        #[arg(long)]
        vector_field: Option<String>,
        /// The name the index records for the supplied vectors' model (by default `supplied`).
        #[arg(long)]
        vector_model: Option<String>,
    },
    /// Search an index.
    Search {
        /// The index directory.
        #[arg(long)]
        index: PathBuf,
        /// hybrid, lexical, fuzzy or semantic (`auto` is an older name of hybrid).
        #[arg(long, default_value = "hybrid")]
        mode: braid::Mode,
        /// Number of hits.
        #[arg(short, default_value_t = 10)]
        k: usize,
        /// Print JSON: {"hits":[…],"stats":{…}}.
        #[arg(long)]
        json: bool,
        /// ACL tokens of the caller, comma-separated (operator input; `public` is implied).
        #[arg(long, value_delimiter = ',')]
        principal: Vec<String>,
        /// The embedding model directory, when the index's own cannot be found.
        #[arg(long)]
        model: Option<String>,
        /// Rerank the top fused candidates with this ONNX cross-encoder directory.
        #[arg(long)]
        rerank: Option<PathBuf>,
        /// Candidates the cross-encoder rescores.
        #[arg(long, default_value_t = braid::DEFAULT_RERANK_CANDIDATES)]
        rerank_candidates: usize,
        /// A query vector, as a JSON array of numbers (the semantic leg searches with it
        /// instead of embedding the text).
        #[arg(long)]
        vector: Option<String>,
        /// How the query is read: `plain` (every character is text) or `simple` (search-box
        /// operators: "exact phrase", -exclude, OR, field:value on keyword fields).
        #[arg(long, default_value = "plain")]
        syntax: String,
        /// Hits to skip: print ranks offset+1 to offset+k (offset + k must stay within --depth).
        #[arg(long, default_value_t = 0)]
        offset: usize,
        /// Continue from the `next_cursor` a previous search printed.
        #[arg(long)]
        cursor: Option<String>,
        /// Candidates per leg (the ranking pages are cut from). By default, 100.
        #[arg(long)]
        depth: Option<usize>,
        /// The vector graph's search width (only indexes where the caller may see 150,000
        /// records or more search a graph): wider finds more of the exact top k, slower. By
        /// default, 1,600.
        #[arg(long)]
        ef_search: Option<usize>,
        /// A facet: a keyword field's name (its most frequent values), or a facet as JSON
        /// (`{"ranges":{"field":"updated","ranges":[{"to":1700000000},{"from":1700000000}]}}`).
        /// Repeatable.
        #[arg(long)]
        facet: Vec<String>,
        /// Boosts as JSON, as the REST API takes them
        /// (`{"decay":[{"field":"updated","function":"exp","origin":1790000000,"scale":2592000}]}`).
        #[arg(long)]
        boosts: Option<String>,
        /// No pseudo-relevance feedback (RM3) on the lexical leg in hybrid: BM25 of
        /// the query alone, not again with the terms its top documents agree on.
        #[arg(long)]
        no_feedback: bool,
        /// At most N hits per value of a field, best first: `parent:2` keeps two sections an
        /// article, `category` one hit a category (N is 1 when not given).
        #[arg(long, value_name = "FIELD[:N]", value_parser = parse_group_by)]
        group_by: Option<(String, usize)>,
        /// Reorder by maximal marginal relevance with this lambda in [0, 1] (1: relevance
        /// alone; lower: hits that differ from those above them come up).
        #[arg(long, value_name = "LAMBDA")]
        mmr: Option<f32>,
        /// Pack the page into at most N tokens (the model's tokenizer, or words without a
        /// model): hits in order while they fit; the count is in the JSON's stats.tokens.
        #[arg(long, value_name = "N")]
        token_budget: Option<usize>,
        /// The query text (plain text unless --syntax says otherwise; never tantivy's syntax).
        #[arg(required_unless_present = "vector", num_args = 0..)]
        query: Vec<String>,
    },
    /// Set an index's synonyms from a Solr/Elasticsearch `synonyms.txt` file (equivalent lines
    /// `a, b, c`, one-way lines `a => b`, `#` comments); no re-index: searches and a running
    /// `braid serve` pick them up. With no file, print the set in use; `--clear` removes it.
    Synonyms {
        /// The index directory.
        #[arg(long)]
        index: PathBuf,
        /// Remove the index's synonyms.
        #[arg(long, conflicts_with = "file")]
        clear: bool,
        /// The synonym file.
        file: Option<PathBuf>,
    },
    /// Verify an index: manifest, every lexical file's checksum, the vector file.
    Check {
        /// The index directory.
        #[arg(long)]
        index: PathBuf,
    },
    /// Evaluate on a BEIR dataset: nDCG@10, Recall@100, MRR@10, p50/p95 latency.
    Eval {
        /// A BEIR folder: corpus.jsonl (or articles/), queries.jsonl, qrels/<split>.tsv.
        #[arg(long)]
        dataset: PathBuf,
        /// An index of the corpus; a temporary in-memory index is built when absent.
        #[arg(long)]
        index: Option<PathBuf>,
        /// Modes to evaluate, comma-separated.
        #[arg(long, default_value = "lexical", value_delimiter = ',')]
        mode: Vec<braid::Mode>,
        /// The qrels split.
        #[arg(long, default_value = "test")]
        split: String,
        /// Print JSON lines, one report per mode.
        #[arg(long)]
        json: bool,
        /// Also write the reports as a JSON array to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Misspell every content word of each query once (seeded), to measure typo tolerance.
        #[arg(long)]
        typos: bool,
        /// Embedding model directory (`default`: all-MiniLM-L6-v2) for the temporary index, or
        /// to override the one `--index` was built with.
        #[arg(long)]
        model: Option<String>,
        /// Fusion methods to evaluate, comma-separated: blend (the default), rrf, minmax,
        /// zscore, dbsf.
        #[arg(long, default_value = "blend", value_delimiter = ',')]
        fusion: Vec<braid::Fusion>,
        /// Per-leg fusion weights, e.g. `lexical=1,fuzzy=0.5,semantic=1` (unnamed legs keep 1).
        #[arg(long)]
        weights: Option<String>,
        /// Per-request boosts as JSON, as `braid search --boosts` takes them (e.g.
        /// `{"title":0.25}` to weigh title matches differently from the index's setting).
        #[arg(long)]
        boosts: Option<String>,
        /// Real misspellings, one `misspelling->correction` a line (codespell's or Wikipedia's
        /// list; `scripts/misspellings.sh` installs one): every query gets one real typo, and
        /// queries with no listed word are left out.
        #[arg(long)]
        misspellings: Option<PathBuf>,
        /// Compare every run to this one, query by query (paired randomization test and a 95 %
        /// interval of the difference): a run label of this invocation (`hybrid/rrf`) or
        /// `FILE#LABEL` for a run in a results file written by `--out`.
        #[arg(long)]
        baseline: Option<String>,
        /// Expand queries with this synonym file (Solr/Elasticsearch format); for the
        /// temporary index only (set an index's own with `braid synonyms`).
        #[arg(long, conflicts_with = "index")]
        synonyms: Option<PathBuf>,
        /// No pseudo-relevance feedback (RM3) on the lexical leg in hybrid, for every
        /// query (runs are labelled `/no-feedback`).
        #[arg(long)]
        no_feedback: bool,
        /// Reorder every query's hits by maximal marginal relevance with this lambda (runs
        /// are labelled `/mmrLAMBDA`).
        #[arg(long, value_name = "LAMBDA")]
        mmr: Option<f32>,
    },
    /// Serve an index over HTTP: REST (`/v1/search`, `/v1/stats`, `/v1/records` for writers,
    /// `/v1/health`, `/v1/openapi.json`) and MCP (`/mcp`, stateless Streamable HTTP), bearer
    /// tokens required.
    #[cfg(feature = "server")]
    Serve {
        /// The index directory.
        #[arg(long)]
        index: PathBuf,
        /// The TOML configuration: limits and the token map (see `braid token new`).
        #[arg(long)]
        config: PathBuf,
        /// Listen here instead of the configuration's `bind` (port 0: any free port).
        #[arg(long)]
        bind: Option<std::net::SocketAddr>,
        /// The embedding model directory, when the index's own cannot be found.
        #[arg(long)]
        model: Option<String>,
    },
    /// Serve an index to a local MCP client over stdin/stdout (tools `search`, `read_section`).
    #[cfg(feature = "server")]
    Mcp {
        /// The index directory.
        #[arg(long)]
        index: PathBuf,
        /// ACL tokens of the caller, comma-separated (operator input; `public` is implied).
        #[arg(long, value_delimiter = ',')]
        principal: Vec<String>,
        /// The embedding model directory, when the index's own cannot be found.
        #[arg(long)]
        model: Option<String>,
        /// Whose memories the memory tools keep (`owner:local:<NAME>`; with exactly one
        /// tenant in --principal). Without it the memory tools answer that there is no scope.
        #[arg(long, value_name = "NAME")]
        owner: Option<String>,
        /// Let the memory tools write (remember, update, forget).
        #[arg(long)]
        write: bool,
        /// A JSON file of tool definitions the MCP tool `search_tools` searches.
        #[arg(long, value_name = "FILE")]
        tool_catalogue: Option<PathBuf>,
    },
    /// Make a bearer token for `braid serve`, or hash one.
    #[cfg(feature = "server")]
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[cfg(feature = "server")]
#[derive(Subcommand)]
enum TokenAction {
    /// Print a fresh random token (on stderr) and its `[[token]]` entry (on stdout) for the
    /// configuration.
    New {
        /// The label logs and stats show for this token.
        #[arg(long)]
        name: String,
        /// The tenant the token belongs to (`tenant:<name>`).
        #[arg(long)]
        tenant: Option<String>,
        /// Further ACL tokens, comma-separated.
        #[arg(long, value_delimiter = ',')]
        principal: Vec<String>,
        /// The token may write records in its tenant's namespace (`write = true`; needs
        /// --tenant).
        #[arg(long, requires = "tenant")]
        write: bool,
    },
    /// Print the SHA-256 of the token read from stdin.
    Hash,
}

#[derive(Clone, Copy, ValueEnum)]
enum Policy {
    Public,
    Deny,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // `BRAID_LOG` sets the log filter; by default only errors, and a server's request log.
    let default_filter = match &cli.command {
        #[cfg(feature = "server")]
        Command::Serve { .. } => "error,braid::serve=info",
        _ => "error",
    };
    // The MCP SDK's own logs stop at warnings whatever the filter: below that they hold whole
    // messages (queries, document text), which Braid's logs never do.
    let filter = tracing_subscriber::EnvFilter::try_from_env("BRAID_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter))
        .add_directive("rmcp=warn".parse().expect("a valid directive"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).init();
    let result = match cli.command {
        Command::Check { index } => commands::check(&index),
        Command::Index {
            input,
            index,
            policy,
            quantize,
            passages,
            no_prune,
            model,
            commit_every,
            promote_tenants_at,
            vectors,
            vector_ids,
            vector_dim,
            vector_field,
            vector_model,
        } => vector_source(vectors.as_deref(), vector_ids.as_deref(), vector_dim, vector_field).and_then(|vectors| {
            commands::index(commands::IndexArgs {
                input: &input,
                dir: &index,
                policy: policy.map(policy_of),
                quantization: quantize,
                passages,
                model: model.as_deref(),
                commit_every,
                promote_tenants_at,
                vectors,
                vector_model: vector_model.as_deref(),
                prune: !no_prune,
            })
        }),
        Command::Synonyms { index, clear, file } => commands::synonyms(&index, file.as_deref(), clear),
        Command::Search {
            index,
            mode,
            k,
            json,
            principal,
            model,
            rerank,
            rerank_candidates,
            vector,
            syntax,
            offset,
            cursor,
            depth,
            ef_search,
            facet,
            boosts,
            no_feedback,
            group_by,
            mmr,
            token_budget,
            query,
        } => {
            let rerank = rerank.as_deref().map(|dir| (dir, rerank_candidates));
            let vector = match vector.as_deref().map(serde_json::from_str::<Vec<f32>>).transpose() {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("error: --vector is not a JSON array of numbers: {e}");
                    return ExitCode::from(2);
                }
            };
            let args = commands::SearchArgs {
                vector,
                dir: &index,
                mode,
                k,
                json,
                principal: &principal,
                model: model.as_deref(),
                rerank,
                syntax: &syntax,
                page: commands::PageArgs { offset, cursor: cursor.as_deref(), depth },
                ef_search,
                facets: &facet,
                boosts: boosts.as_deref(),
                feedback: !no_feedback,
                group_by,
                mmr,
                token_budget,
            };
            commands::search(&args, &query.join(" "))
        }
        Command::Eval {
            dataset,
            index,
            mode,
            split,
            json,
            out,
            typos,
            model,
            fusion,
            weights,
            boosts,
            misspellings,
            baseline,
            synonyms,
            no_feedback,
            mmr,
        } => commands::eval(
            &commands::EvalArgs {
                dataset: &dataset,
                index: index.as_deref(),
                split: &split,
                json,
                typos,
                model: model.as_deref(),
                weights: weights.as_deref(),
                boosts: boosts.as_deref(),
                misspellings: misspellings.as_deref(),
                baseline: baseline.as_deref(),
                synonyms: synonyms.as_deref(),
                feedback: !no_feedback,
                mmr,
            },
            &mode,
            &fusion,
            out.as_deref(),
        ),
        #[cfg(feature = "server")]
        Command::Serve { index, config, bind, model } => braid_server::serve(
            |ef_search| commands::open_with_model(&index, model.as_deref(), ef_search, commands::MissingModel::Warn),
            &config,
            bind,
        ),
        #[cfg(feature = "server")]
        Command::Mcp { index, principal, model, owner, write, tool_catalogue } => {
            commands::open_with_model(&index, model.as_deref(), None, commands::MissingModel::Warn).and_then(|opened| {
                braid_server::mcp_stdio(opened, &principal, owner.as_deref(), write, tool_catalogue.as_deref())
            })
        }
        #[cfg(feature = "server")]
        Command::Token { action: TokenAction::New { name, tenant, principal, write } } => {
            braid_server::token_new(&name, tenant.as_deref(), &principal, write)
        }
        #[cfg(feature = "server")]
        Command::Token { action: TokenAction::Hash } => braid_server::token_hash(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::from(2)
        }
    }
}

fn vector_source(
    file: Option<&std::path::Path>,
    ids: Option<&std::path::Path>,
    dim: Option<usize>,
    field: Option<String>,
) -> anyhow::Result<Option<vectors::VectorSource>> {
    Ok(match (file, ids, field) {
        (Some(file), Some(ids), _) => Some(vectors::VectorSource::Sidecar(vectors::Sidecar::open(file, ids, dim)?)),
        (_, _, Some(field)) => Some(vectors::VectorSource::Field(field)),
        _ => None,
    })
}

fn policy_of(p: Policy) -> braid::AccessPolicy {
    match p {
        Policy::Public => braid::AccessPolicy::Public,
        Policy::Deny => braid::AccessPolicy::Deny,
    }
}

/// `--group-by`'s `FIELD[:N]`.
fn parse_group_by(text: &str) -> Result<(String, usize), String> {
    let (field, n) = match text.rsplit_once(':') {
        Some((field, n)) => (field, n.parse::<usize>().map_err(|_| format!("`{n}` is not a number of hits"))?),
        None => (text, 1),
    };
    if field.is_empty() {
        return Err("no field named".into());
    }
    Ok((field.to_string(), n))
}
