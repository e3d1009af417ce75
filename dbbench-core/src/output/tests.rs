use super::*;

/// The benchmark name a results JSON or CSV of `stem` in `work` holds (each names it: the JSON's
/// `benchmark`, the CSV's first column), both read under the stem's lock.
fn versions(work: &Path, stem: &str) -> Option<(String, String)> {
    let _held = crate::util::stem_lock::hold(work, stem).unwrap();
    let json = json::read(&crate::util::paths::results_file(work, stem)).ok()?;
    let csv = std::fs::read_to_string(crate::util::paths::csv_file(work, stem)).ok()?;
    let row = csv.lines().nth(1).expect("a CSV row").to_string();
    Some((json.benchmark, row.split(',').next().unwrap().to_string()))
}

#[test]
fn two_publishers_of_one_stem_leave_one_complete_version_never_a_mix() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().to_path_buf();
    let stem = "suite.vlf.doubling";
    let version = |name: &str| {
        let mut result = crate::model::sample::vlf();
        result.benchmark = name.to_string();
        result
    };
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = ["vlf::first", "vlf::second"]
            .into_iter()
            .map(|name| {
                let (work, result) = (&work, version(name));
                s.spawn(move || {
                    for _ in 0..8 {
                        publish(&result, stem, work).unwrap();
                    }
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut seen = 0;
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some((json, csv)) = versions(&work, stem) {
                    assert_eq!(
                        json, csv,
                        "the JSON of one publisher beside the CSV of the other"
                    );
                    seen += 1;
                }
            }
            seen
        });
        for writer in writers {
            writer.join().unwrap();
        }
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        assert!(reader.join().unwrap() > 0, "the reader saw the views");
    });
    let (json, csv) = versions(&work, stem).unwrap();
    assert_eq!(json, csv);
    assert!(
        ["vlf::first", "vlf::second"].contains(&json.as_str()),
        "{json}"
    );
}
