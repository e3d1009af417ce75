//! One benchmark's section of the report page: its environment, its results table, the settings
//! check, the cells' statuses, the method notes and its charts. Apart from the page and the chart
//! files because it only turns one result into HTML text.

use super::{ChartFiles, SHARED};
use crate::analysis::table::BenchmarkTable;
use crate::model::results::{BenchmarkResult, CellStatus};
use crate::util::calendar::utc_text;
use crate::util::grid::escape;
use std::fmt::Write;

/// One benchmark's section: its environment, results table and the notes on it, how it was
/// measured, and its charts.
pub(super) fn section(result: &BenchmarkResult, stem: &str, charts: &ChartFiles) -> String {
    let mut out = String::new();
    let title = if result.title.is_empty() {
        String::new()
    } else {
        format!(" — {}", escape(&result.title))
    };
    let _ = writeln!(
        out,
        "<section id=\"{}\">\n<h2>{}{title}</h2>",
        escape(stem),
        escape(&result.benchmark)
    );
    out.push_str(&environment(result));
    if let Some(line) = crate::output::summary::not_applicable_line(result) {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>\n</section>", escape(&line));
        return out;
    }
    let table = BenchmarkTable::of(result);
    // Tables with many configuration and metric columns scroll rather than overflow the page.
    let _ = writeln!(
        out,
        "<div class=\"wide\">\n{}</div>",
        table.to_grid().to_html()
    );
    if let Some(line) = crate::output::summary::elsewhere_line(result) {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(&line));
    }
    for note in &table.notes {
        let _ = writeln!(out, "<p class=\"warn\">⚠ {}</p>", escape(note));
    }
    settings_check(&mut out, &table.settings);
    cell_statuses(&mut out, result);
    method_notes(&mut out, result, &table, stem);
    chart_images(&mut out, result, charts);
    out.push_str("</section>\n");
    out
}

/// The confounder check: one line when the settings agree, else its heading and each setting
/// that differs.
fn settings_check(out: &mut String, check: &crate::analysis::confounder::SettingsCheck) {
    match check.lines().split_first() {
        Some((line, [])) => {
            let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(line));
        }
        Some((heading, _)) => {
            let _ = writeln!(
                out,
                "<p class=\"warn\">⚠ {}</p>\n<ul class=\"warn\">",
                escape(heading)
            );
            for line in check.described() {
                let _ = writeln!(out, "<li>{}</li>", escape(&line));
            }
            let _ = writeln!(out, "</ul>");
        }
        None => {}
    }
}

/// Each cell that failed or was skipped, with why.
fn cell_statuses(out: &mut String, result: &BenchmarkResult) {
    for cell in &result.cells {
        match &cell.status {
            CellStatus::Failed(e) => {
                let _ = writeln!(
                    out,
                    "<p class=\"failed\">{} failed: {}</p>",
                    escape(&cell.name),
                    escape(e)
                );
            }
            CellStatus::Skipped(why) => {
                let _ = writeln!(
                    out,
                    "<p class=\"note\">{} skipped: {}</p>",
                    escape(&cell.name),
                    escape(why)
                );
            }
            CellStatus::Ok => {}
        }
    }
}

/// How the benchmark was measured and where its data is, why it stopped, the spread between
/// runs, and the notes on its reference values and cases.
fn method_notes(out: &mut String, result: &BenchmarkResult, table: &BenchmarkTable, stem: &str) {
    let _ = writeln!(
        out,
        "<p class=\"note\">{}. Data: <a href=\"../results/{stem}.json\">JSON</a>, \
         <a href=\"../results/{stem}.csv\">CSV</a> (one row per run).</p>",
        escape(&table.method_line()),
        stem = escape(stem)
    );
    if let Some(pooling) = &table.pooling {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(pooling));
    }
    if let Some(stopping) = &result.stopping {
        let _ = writeln!(
            out,
            "<p class=\"note\">{}.</p>",
            escape(&stopping.line(result.run.precision.as_ref()))
        );
        if let Some(design) = stopping.design_line() {
            let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(&design));
        }
    }
    if let Some(check) = crate::analysis::position::PositionCheck::of(result) {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(&check.line()));
    }
    let between = crate::analysis::between::lines(result);
    if !between.is_empty() {
        let items: String = between
            .iter()
            .map(|line| format!("<li>{}</li>", escape(line.trim())))
            .collect();
        let _ = writeln!(
            out,
            "<p class=\"note\">Between runs:</p><ul class=\"note\">{items}</ul>"
        );
    }
    if let Some(note) = crate::output::summary::reference_note(table) {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", escape(&note));
    }
    for note in crate::output::summary::case_notes(result) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(&note));
    }
}

/// The charts as images, each cell's waits with their table, and the history.
fn chart_images(out: &mut String, result: &BenchmarkResult, charts: &ChartFiles) {
    let img = |out: &mut String, path: &str, alt: &str| {
        let _ = writeln!(
            out,
            "<img src=\"{}\" alt=\"{}\">",
            escape(path),
            escape(alt)
        );
    };
    if let Some(path) = &charts.elapsed {
        img(out, path, "elapsed time per cell");
    }
    for (kind, path) in &charts.shared {
        let what = SHARED.iter().find(|s| s.0 == *kind).map_or("", |s| s.1);
        img(out, path, what);
    }
    for (cell, path) in &charts.series {
        img(out, path, &format!("sampled counters of {cell}"));
    }
    for (cell, path) in &charts.waits {
        img(out, path, &format!("top waits of {cell}"));
        let waits = result.cells.iter().find(|c| &c.name == cell);
        if let Some(grid) = waits.and_then(super::super::waits::table) {
            let _ = writeln!(
                out,
                "<p class=\"note\">{}: cumulative waits of the measured runs</p>\n{}",
                escape(cell),
                grid.to_html()
            );
        }
    }
    if !charts.history_table.is_empty() {
        out.push_str(
            "<h3>History</h3>\n<p class=\"note\">Mean elapsed time of each cell in every \
            invocation of the results store on this backend and scale.</p>\n",
        );
        let _ = writeln!(out, "<div class=\"wide\">\n{}</div>", charts.history_table);
    }
    if let Some(path) = &charts.history {
        img(out, path, "mean elapsed time per invocation");
    }
}

pub(super) fn environment(result: &BenchmarkResult) -> String {
    let host = &result.host;
    let mut facts = vec![
        format!(
            "{} ({})",
            escape(&result.backend.kind),
            escape(&result.backend.version)
        ),
        format!("scale {}", escape(&result.scale)),
        format!(
            "{} + {} warm-up per cell, {} order",
            escape(&result.run.rounds_text()),
            result.run.warmup,
            escape(&result.run.order)
        ),
        format!(
            "fixture {} ({} rows)",
            escape(&result.run.fixture),
            result.run.fixture_rows
        ),
        format!("{} × {}", host.cores, escape(&host.cpu_model)),
        format!(
            "{:.1} GiB memory",
            host.memory_bytes as f64 / (1u64 << 30) as f64
        ),
        format!("kernel {}", escape(&host.kernel)),
        format!("file system {}", escape(&host.file_system)),
        format!("dbbench {}", escape(&result.dbbench_version)),
        format!("{} build", escape(&result.run.build_profile)),
        format!("started {}", utc_text(result.started_at_unix_s)),
    ];
    if let Some(commit) = &host.git_commit {
        facts.push(format!("commit {}", escape(commit)));
    }
    let preconditions: Vec<String> = result
        .backend
        .preconditions
        .iter()
        .map(|(k, v)| format!("{}={}", escape(k), escape(v)))
        .collect();
    if !preconditions.is_empty() {
        facts.push(format!("preconditions: {}", preconditions.join(", ")));
    }
    let mut out = format!("<p class=\"env\">{}</p>\n", facts.join(" · "));
    // The machine by measurement: timings are compared only where these agree.
    if let Some(calibration) = &result.calibration {
        let _ = writeln!(
            out,
            "<p class=\"env\">machine calibration: {}</p>",
            escape(&calibration.line())
        );
    }
    // What the busy-machine guard took for the server rather than for neighbours.
    if let Some(server) = &result.server_on_host {
        let _ = writeln!(
            out,
            "<p class=\"env\">server processes on this host: {}</p>",
            escape(&server.describe())
        );
    }
    out
}
