//! A managed PostgreSQL cluster is this user's alone, tried as another local user would: from a
//! work dir every user can traverse (mode 755), `nobody` cannot connect to its socket, while the
//! cluster's own user can. Needs root (to act as `nobody`); says `skipped: …` otherwise, or
//! without PostgreSQL's server binaries.

use dbbench_core::__internals::postgres::cluster::{self, Binaries, Cluster, ClusterSpec};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

#[test]
fn another_local_user_cannot_reach_a_managed_cluster() {
    if !cluster::available_for_tests() {
        return;
    }
    if cluster::run_as().unwrap().is_none() {
        println!("skipped: only root can try the cluster as another user (nobody)");
        return;
    }
    let open = tempfile::tempdir().unwrap();
    std::fs::set_permissions(open.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let work_base = open.path().join("postgres");
    std::fs::create_dir_all(&work_base).unwrap();
    std::fs::set_permissions(&work_base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = ClusterSpec {
        work_base,
        data_base: None,
        wal_base: None,
        wal_segsize_mb: None,
        settings: Vec::new(),
    };
    let binaries = Binaries::find().unwrap();
    let id = format!("pg-private-{}", std::process::id());
    let server = Cluster::start(&binaries, spec, id).unwrap();
    let t = server.settings().target("postgres");
    let psql = |user: &str| {
        Command::new("runuser")
            .args(["-u", user, "--", "psql", "-X", "-w", "-h", &t.host])
            .args(["-p", &t.port.to_string(), "-U", &t.user, "-d", "postgres"])
            .args(["-c", "SELECT 1"])
            .output()
            .unwrap()
    };
    let own = psql("postgres");
    assert!(
        own.status.success(),
        "the cluster's own user connects: {own:?}"
    );
    let theirs = psql("nobody");
    assert!(
        !theirs.status.success(),
        "nobody got in: {}",
        String::from_utf8_lossy(&theirs.stdout)
    );
    server.destroy().unwrap();
}
