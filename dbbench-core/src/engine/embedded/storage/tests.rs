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
