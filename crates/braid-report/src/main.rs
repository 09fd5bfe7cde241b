//! `braid-report`: the measuring side of Braid's benchmark report.
//!
//! - `export` writes an index's document vectors, every passage it embedded (text and stored
//!   vector) and the dataset's query vectors (same model, same vectors) as raw little-endian
//!   f32 plus JSON ids, so other engines never re-embed;
//! - `run` times Braid's `search()` one query at a time on one thread and writes the rankings;
//! - `score` scores every engine's rankings with the same metric code (`braid_eval`) and prints
//!   q/s and nDCG@10 side by side with ratios;
//! - `readme` regenerates the README tables between marker comments from the JSON results;
//! - `plot` draws one quality-vs-latency SVG per dataset;
//! - `scale` draws cost against size, log-log, from `scripts/scale.sh`'s results;
//! - `fit` fits the fusion's parameters on training splits and writes the legs' lists for the
//!   studies in `research/` (a study tool, not part of the user's CLI).
//!
//! `scripts/report.sh` and `benches/peers/peers.sh` drive it; it is a separate crate so that
//! `plotters` never enters the library or the `braid` CLI build.

mod fit;
mod peers;
mod plot;
mod readme;
mod scale;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Benchmark reporting for Braid.
#[derive(Parser)]
#[command(name = "braid-report", about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Write the index's document vectors, its passages (text and vector, one row each) and
    /// the judged queries' vectors for other engines.
    Export {
        /// The BEIR dataset folder.
        #[arg(long)]
        dataset: PathBuf,
        /// An index of the dataset built with `--model`.
        #[arg(long)]
        index: PathBuf,
        /// The qrels split whose queries are exported (`test`; a help center's `holdout`).
        #[arg(long, default_value = "test")]
        split: String,
        /// Output folder: docs.json, docs.f32, passages.json, passages.f32, queries.json,
        /// queries.f32.
        #[arg(long)]
        out: PathBuf,
    },
    /// Time Braid's search() per mode, one query at a time, and write the rankings.
    Run {
        /// The BEIR dataset folder.
        #[arg(long)]
        dataset: PathBuf,
        /// The index (with vectors) the export was made from.
        #[arg(long)]
        index: PathBuf,
        /// The folder `export` wrote (the query vectors come from there).
        #[arg(long)]
        vectors: PathBuf,
        /// The qrels split whose queries run (the one exported).
        #[arg(long, default_value = "test")]
        split: String,
        /// Modes, comma-separated.
        #[arg(long, default_value = "lexical,semantic,hybrid", value_delimiter = ',')]
        mode: Vec<String>,
        /// Hits per query.
        #[arg(short, default_value_t = 10)]
        k: usize,
        /// Worker threads of the search (rayon); 1 for the single-threaded comparison.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// The engine name the runs carry (`braid`; `braid-one-vector` for an index of one
        /// vector a record, the rows numpy's exact search reads).
        #[arg(long, default_value = "braid")]
        engine: String,
        /// Time ids only, not whole hits as well.
        #[arg(long)]
        no_hits: bool,
        /// The run file to write.
        #[arg(long)]
        out: PathBuf,
    },
    /// Score run files of every engine on one dataset and print them beside Braid's.
    Score {
        /// The BEIR dataset folder.
        #[arg(long)]
        dataset: PathBuf,
        /// The qrels split the runs answered (a split other than `test`, or any split of a
        /// Markdown corpus, names the table `<dataset>-<split>`).
        #[arg(long, default_value = "test")]
        split: String,
        /// Write the scored table as JSON here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Machine and load notes to keep with the table.
        #[arg(long, default_value = "")]
        note: String,
        /// Run files (`run` and benches/peers/peers.py output); rounds of one engine and mode are
        /// combined by their median q/s.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
    },
    /// Regenerate the README tables between `<!-- results: FILES -->` / `<!-- peers: FILES -->`
    /// / `<!-- peers-quality: FILES -->` / `<!-- peers-vs-default: FILES -->` and
    /// `<!-- /results -->` markers from JSON files in a
    /// results folder.
    Readme {
        /// The folder holding `braid eval --out` and `score --out` JSON.
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// The README to rewrite in place.
        #[arg(long, default_value = "README.md")]
        readme: PathBuf,
    },
    /// Draw one nDCG@10-vs-latency SVG per dataset from the JSON results.
    Plot {
        /// The folder holding `braid eval --out` and `score --out` JSON.
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// The folder to write `<dataset>.svg` into.
        #[arg(long, default_value = "docs/plots")]
        out: PathBuf,
    },
    /// Fit the fusion's parameters on training splits (never test): prints the best blend,
    /// RRF and score average, macro-averaged over every set clean and with real misspellings.
    Fit {
        /// A fitting set, `DATASET_DIR,INDEX_DIR,SPLIT` (split `train` or `dev`); repeat it.
        #[arg(long = "set", required = true)]
        sets: Vec<String>,
        /// Real misspellings (`misspelling->correction` lines) for the misspelt copy of each query.
        #[arg(long)]
        misspellings: PathBuf,
        /// Write the full fit (every group's score of the best and reference fusions) as JSON.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write every sample — its group, query, text, judgements and the legs' ranked
        /// lists with raw scores — as JSON lines, to study fusions outside Braid.
        #[arg(long)]
        samples: Option<PathBuf>,
    },
    /// Draw cost against records, log-log, from `results/scale-N<suffix>.json`.
    Scale {
        /// The folder holding `scripts/scale.sh`'s JSON.
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// The series: the file names' part after the size (`-int8`, `-d0`; empty for f32).
        #[arg(long, default_value = "", allow_hyphen_values = true)]
        suffix: String,
        /// The SVG to write.
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Export { dataset, index, split, out } => peers::export(&dataset, &index, &split, &out),
        Command::Run { dataset, index, vectors, split, mode, k, threads, engine, no_hits, out } => {
            let args = peers::RunArgs {
                dataset: &dataset,
                split: &split,
                index: &index,
                vectors: &vectors,
                k,
                threads,
                engine: &engine,
                hits: !no_hits,
            };
            peers::run(&args, &mode, &out)
        }
        Command::Score { dataset, split, out, note, runs } => {
            peers::score(&dataset, &split, &runs, out.as_deref(), &note)
        }
        Command::Readme { results, readme } => readme::regenerate(&results, &readme),
        Command::Plot { results, out } => plot::plot_all(&results, &out),
        Command::Scale { results, suffix, out } => scale::plot_scale(&results, &suffix, &out),
        Command::Fit { sets, misspellings, out, samples } => {
            fit::fit(&sets, &misspellings, out.as_deref(), samples.as_deref())
        }
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
