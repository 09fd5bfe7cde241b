//! Quality against latency, one SVG per dataset: Braid's modes from `braid eval` and, where a
//! peers comparison exists for the dataset, every engine of that run.

use std::fs;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use braid_eval::Report;
use plotters::prelude::*;

use crate::peers::Scored;

/// A labelled point: (ms per query, nDCG@10, label).
type Point = (f64, f64, String);

/// Draws `<out>/<dataset>.svg` for every `<dataset>.json` eval report in `results` (files
/// whose name has no `-`: variants such as `scifact-typos` are not datasets).
pub fn plot_all(results: &Path, out: &Path) -> Result<()> {
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut entries: Vec<_> = fs::read_dir(results)
        .with_context(|| format!("reading {}", results.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    entries.sort();
    for path in entries {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else { continue };
        if name.contains('-') {
            continue;
        }
        let text = fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let Ok(reports) = serde_json::from_str::<Vec<Report>>(&text) else { continue };
        let eval: Vec<Point> = reports.iter().map(|r| (r.p50_ms, r.ndcg_at_10, r.mode.clone())).collect();
        let peers_path = results.join(format!("peers-{name}.json"));
        let peers: Vec<Point> = match fs::read_to_string(&peers_path) {
            Ok(text) => {
                let scored: Scored =
                    serde_json::from_str(&text).with_context(|| format!("parsing {}", peers_path.display()))?;
                scored
                    .rows
                    .iter()
                    .filter(|r| r.qps > 0.0)
                    .map(|r| (1000.0 / r.qps, r.ndcg_at_10, format!("{} {} k={}", r.engine, r.mode, r.k)))
                    .collect()
            }
            Err(_) => Vec::new(),
        };
        let svg = out.join(format!("{name}.svg"));
        draw(&svg, name, &eval, &peers)?;
        eprintln!("wrote {}", svg.display());
    }
    Ok(())
}

fn draw(path: &Path, dataset: &str, eval: &[Point], peers: &[Point]) -> Result<()> {
    let all = || eval.iter().chain(peers);
    let (mut x_min, mut x_max) = (f64::MAX, f64::MIN);
    let (mut y_min, mut y_max) = (f64::MAX, f64::MIN);
    for (x, y, _) in all() {
        x_min = x_min.min(*x);
        x_max = x_max.max(*x);
        y_min = y_min.min(*y);
        y_max = y_max.max(*y);
    }
    let x_range = (x_min.max(1e-3) / 1.5)..(x_max.max(1e-3) * 2.5);
    let pad = ((y_max - y_min) * 0.15).max(0.01);
    let y_range = (y_min - pad).max(0.0)..(y_max + pad).min(1.0);
    let plot_err = |e: &dyn std::fmt::Display| anyhow!("drawing {}: {e}", path.display());

    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| plot_err(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{dataset}: nDCG@10 against latency (1 client thread)"), ("sans-serif", 20))
        .margin(20)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(x_range.log_scale(), y_range)
        .map_err(|e| plot_err(&e))?;
    chart.configure_mesh().x_desc("ms per query (log scale)").y_desc("nDCG@10").draw().map_err(|e| plot_err(&e))?;
    let series: [(&[Point], RGBColor, &str); 2] = [
        (eval, BLUE, "Braid modes, braid eval (p50 ms, k = 100, suggestions on)"),
        (peers, RED, "peers run: every engine (mean ms, 1 thread, query vectors precomputed)"),
    ];
    for (points, color, label) in series {
        if points.is_empty() {
            continue;
        }
        chart
            .draw_series(points.iter().map(|(x, y, text)| {
                EmptyElement::at((*x, *y))
                    + Circle::new((0, 0), 4, color.filled())
                    + Text::new(text.clone(), (6, -12), ("sans-serif", 12).into_font().color(&color))
            }))
            .map_err(|e| plot_err(&e))?
            .label(label)
            .legend(move |(x, y)| Circle::new((x, y), 4, color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
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
    fn a_plot_names_every_point() {
        let dir = std::env::temp_dir().join(format!("braid-plot-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("tiny.svg");
        let eval = vec![(1.2, 0.69, "lexical".to_string()), (13.0, 0.715, "hybrid".to_string())];
        let peers = vec![(0.4, 0.68, "bm25s lexical k=10".to_string())];
        draw(&svg, "tiny", &eval, &peers).unwrap();
        let text = fs::read_to_string(&svg).unwrap();
        assert!(text.starts_with("<svg"));
        for label in ["lexical", "hybrid", "bm25s lexical k=10", "nDCG@10"] {
            assert!(text.contains(label), "{label} missing");
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
