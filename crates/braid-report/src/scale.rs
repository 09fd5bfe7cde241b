//! Cost against size, log-log, from `scripts/scale.sh`'s `results/scale-N[-suffix].json`:
//! build time, index size, serving memory and p50 latency per mode for the principal who sees
//! everything, one line per measure over the sizes of one series (the files sharing a suffix).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use plotters::prelude::*;
use serde_json::Value;

/// One measure over the sizes: its label and `(records, value)` points.
type Line = (String, Vec<(f64, f64)>);

/// Draws `out` from the scale results in `results` whose file name is `scale-<N><suffix>.json`.
pub fn plot_scale(results: &Path, suffix: &str, out: &Path) -> Result<()> {
    let mut runs: Vec<Value> = Vec::new();
    for entry in fs::read_dir(results).with_context(|| format!("reading {}", results.display()))? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else { continue };
        let Some(size) = name.strip_prefix("scale-").and_then(|n| n.strip_suffix(".json")) else { continue };
        let Some(number) = size.strip_suffix(suffix) else { continue };
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        runs.push(serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?);
    }
    if runs.len() < 2 {
        return Err(anyhow!(
            "need at least two sizes of scale-N{suffix}.json in {}, found {}",
            results.display(),
            runs.len()
        ));
    }
    let lines = lines(&runs);
    draw(out, suffix, &lines)?;
    eprintln!("wrote {}", out.display());
    Ok(())
}

/// The measures of `runs`, each over the sizes that have it.
fn lines(runs: &[Value]) -> Vec<Line> {
    let mut lines: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for run in runs {
        let Some(records) = run["records"].as_f64() else { continue };
        let mut put = |label: &str, value: Option<f64>| {
            if let Some(v) = value.filter(|v| *v > 0.0) {
                lines.entry(label.to_string()).or_default().push((records, v));
            }
        };
        put("build, s", run["build_seconds"].as_f64());
        put("index on disk, MB", run["index_bytes"].as_f64().map(|b| b / 1e6));
        put("peak RSS serving, MiB", run["peak_rss_serving_mib"].as_f64());
        // Runs of earlier releases opened the two parts one after the other and reported each.
        let sequential = || Some(run["open_lexical_ms"].as_f64()? + run["open_vectors_ms"].as_f64().unwrap_or(0.0));
        put("open, ms", run["open_ms"].as_f64().or_else(sequential));
        for row in run["latency"].as_array().into_iter().flatten() {
            if row["principal"] == "100%" && row.get("facets").is_none() {
                if let Some(mode) = row["mode"].as_str() {
                    put(&format!("{mode} p50, ms"), row["p50_ms"].as_f64());
                }
            }
        }
    }
    lines
        .into_iter()
        .map(|(label, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (label, points)
        })
        .filter(|(_, points)| points.len() >= 2)
        .collect()
}

fn draw(path: &Path, suffix: &str, lines: &[Line]) -> Result<()> {
    let points = || lines.iter().flat_map(|(_, p)| p.iter());
    let x_min = points().map(|p| p.0).fold(f64::MAX, f64::min);
    let x_max = points().map(|p| p.0).fold(f64::MIN, f64::max);
    let y_min = points().map(|p| p.1).fold(f64::MAX, f64::min);
    let y_max = points().map(|p| p.1).fold(f64::MIN, f64::max);
    let plot_err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());
    let root = SVGBackend::new(path, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(&e))?;
    let series = if suffix.is_empty() { "f32 vectors".to_string() } else { suffix.trim_start_matches('-').to_string() };
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("Cost against records (log-log), scale bench, {series}"), ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(((x_min / 1.5)..(x_max * 1.5)).log_scale(), ((y_min / 2.0)..(y_max * 2.0)).log_scale())
        .map_err(|e| plot_err(&e))?;
    chart.configure_mesh().x_desc("records").y_desc("cost (unit in each label)").draw().map_err(|e| plot_err(&e))?;
    for (i, (label, points)) in lines.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
            .map_err(|e| plot_err(&e))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled()))).map_err(|e| plot_err(&e))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| plot_err(&e))?;
    root.present().map_err(|e| plot_err(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scale_plot_has_a_line_per_measure() {
        let dir = std::env::temp_dir().join(format!("braid-scale-plot-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for (n, build, p50) in [(10_000, 2.0, 0.3), (100_000, 30.0, 0.5)] {
            let run = serde_json::json!({
                "records": n, "build_seconds": build, "index_bytes": n * 2000, "peak_rss_serving_mib": 50,
                "open_lexical_ms": 5.0, "open_ms": 6.0,
                "latency": [{"principal": "100%", "mode": "lexical", "p50_ms": p50},
                            {"principal": "1%", "mode": "lexical", "p50_ms": 9.0}],
            });
            fs::write(dir.join(format!("scale-{n}-int8.json")), run.to_string()).unwrap();
        }
        fs::write(dir.join("scale-100000.json"), "{}").unwrap();
        let svg = dir.join("scale.svg");
        plot_scale(&dir, "-int8", &svg).unwrap();
        let text = fs::read_to_string(&svg).unwrap();
        for label in ["build, s", "index on disk, MB", "lexical p50, ms", "int8"] {
            assert!(text.contains(label), "{label} missing");
        }
        assert!(plot_scale(&dir, "-d0", &svg).is_err(), "one size is not a curve");
        fs::remove_dir_all(&dir).unwrap();
    }
}
