use super::*;

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn remove_files_tries_every_file_and_reports_the_first_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let mut paths: Vec<PathBuf> = (0..7).map(|i| tmp.path().join(format!("f{i}"))).collect();
    for p in &paths {
        std::fs::write(p, b"x").unwrap();
    }
    // A missing file is fine; a directory cannot be removed as a file.
    paths.push(tmp.path().join("missing"));
    let dir = tmp.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    paths.insert(4, dir.clone());
    let err = remove_files(&paths).unwrap_err().to_string();
    assert!(
        err.contains("cannot remove") && err.contains("dir"),
        "{err}"
    );
    assert!(paths.iter().filter(|p| p.exists()).eq([&dir]));
    assert!(remove_files(&[]).is_ok());
}

#[test]
fn layout_is_shareable_across_threads() {
    assert_send_sync::<Layout>();
    assert_send_sync::<StorageErrors>();
}

#[test]
fn a_leftover_s_manifest_removes_only_the_files_made_for_its_database() {
    let tmp = tempfile::tempdir().unwrap();
    let anchor = tmp.path().join("bench_r1.db");
    let mut plan = LayoutPlan::new(&anchor, &StorageSpec::DEFAULT, &Volumes::default()).unwrap();
    // A manifest rewritten to name a file of the user's that the database never made.
    let victim = tmp.path().join("precious.txt");
    std::fs::write(&victim, "keep").unwrap();
    plan.data[0].path = victim.clone();
    plan.write_manifest(&mut Vec::new()).unwrap();
    std::fs::write(&anchor, "").unwrap();
    std::fs::write(&plan.log.path, "log").unwrap();
    let err = Layout::remove_leftover(&anchor).unwrap_err().to_string();
    assert!(
        err.contains("precious.txt") && err.contains("left alone"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(
        !anchor.exists() && !plan.log.path.exists(),
        "its own files are removed"
    );
}
