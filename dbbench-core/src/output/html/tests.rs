use super::*;

#[test]
fn index_links_every_benchmark_with_table_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let result = crate::model::sample::vlf();
    crate::output::publish(&result, "suite.vlf.doubling", work).unwrap();
    std::fs::write(work.join("results/broken.json"), "{}").unwrap();
    let index = crate::output::rewrite(work).unwrap();
    assert_eq!(index, work.join("report/index.html"));
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("<a href=\"#suite.vlf.doubling\">vlf::doubling</a>"));
    assert!(
        html.contains("broken — not readable"),
        "a bad file is listed, not fatal"
    );
    assert!(html.contains("<td class=\"l\">faster</td>"));
    for chart in [
        "suite.vlf.doubling/elapsed.svg",
        "suite.vlf.doubling/series-test_1.svg",
        "suite.vlf.doubling/waits-test_4.svg",
    ] {
        assert!(html.contains(&format!("src=\"{chart}\"")), "{chart} linked");
        assert!(work.join("report").join(chart).exists(), "{chart} written");
    }
    assert!(work.join("results/suite.vlf.doubling.csv").exists());
}

#[test]
fn the_environment_names_a_server_on_this_host() {
    let mut result = crate::model::sample::vlf();
    assert!(!environment(&result).contains("server processes"));
    result.server_on_host = Some(crate::model::interference::ServerOnHost {
        name: "sqlservr".into(),
        pid: 500,
        children: 1,
        found_by: "the parent of SQL Server's process, SERVERPROPERTY('ProcessID') 512".into(),
    });
    let html = environment(&result);
    assert!(
        html.contains(
            "<p class=\"env\">server processes on this host: sqlservr (pid 500) and its 1 \
                 child, counted as the workload, not as neighbours (the parent of SQL Server&#39;s \
                 process"
        ),
        "{html}"
    );
}

/// The sample with settings read back: `test_3` runs with a cache size `test_1` did not.
fn with_settings(changed: bool) -> BenchmarkResult {
    use crate::model::setting::Setting;
    let mut result = crate::model::sample::vlf();
    for cell in &mut result.cells {
        let cache = if changed && cell.name == "test_3" {
            "-4000"
        } else {
            "-2000"
        };
        for run in &mut cell.runs {
            run.settings
                .insert("pragma.cache_size".into(), Setting::plain(cache));
            run.settings.insert(
                "storage.data_growth".into(),
                Setting::plain(cell.config["growth"].clone()).set_by("growth"),
            );
        }
    }
    result
}

#[test]
fn the_report_and_the_summary_say_what_the_settings_check_found() {
    let charts = ChartFiles::default();
    let clean = with_settings(false);
    let line = "settings: only the declared options differ (2 settings compared)";
    assert!(section(&clean, "s", &charts).contains(&format!("<p class=\"note\">{line}.</p>")));
    assert!(crate::output::summary::render(&clean).contains(&format!("  {line}\n")));
    let dirty = with_settings(true);
    let html = section(&dirty, "s", &charts);
    assert!(
        html.contains(
            "<p class=\"warn\">⚠ settings: 1 differs where no declared option says it \
                 should (2 settings compared):</p>\n<ul class=\"warn\">\n<li>pragma.cache_size: \
                 -2000 in test_1 (baseline), -4000 in test_3</li>\n</ul>"
        ),
        "{html}"
    );
    let text = crate::output::summary::render(&dirty);
    assert!(
        text.contains("\n    pragma.cache_size: -2000 in test_1 (baseline), -4000 in test_3\n"),
        "{text}"
    );
    // Results without settings (older files) say nothing about them.
    let old = crate::model::sample::vlf();
    assert!(!crate::output::summary::render(&old).contains("settings:"));
}

#[test]
fn an_empty_work_dir_gets_an_index_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let html = std::fs::read_to_string(write_index(dir.path()).unwrap()).unwrap();
    assert!(html.contains("No results yet"));
    let e = crate::output::rewrite(dir.path()).unwrap_err().to_string();
    assert!(e.contains("no results in"), "{e}");
}
