//! The machine a benchmark ran on: CPU, memory, kernel and the file system under the database.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Facts about the host, recorded with every result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// CPU model name.
    pub cpu_model: String,
    /// Logical cores.
    pub cores: usize,
    /// Physical memory in bytes.
    pub memory_bytes: u64,
    /// Operating system (`Debian GNU/Linux 12 (bookworm)`).
    pub os: String,
    /// Kernel release.
    pub kernel: String,
    /// File system type of the directory the embedded databases live in (`ext4`).
    pub file_system: String,
    /// The git commit of the benchmark's source tree, when it is a git checkout.
    pub git_commit: Option<String>,
}

impl HostInfo {
    /// Reads the host's facts; `data_dir` is where databases are created, `source_dir` the
    /// benchmark crate (for the git commit). Facts that cannot be read are left empty.
    pub fn detect(data_dir: &Path, source_dir: &Path) -> HostInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_bytes = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .unwrap_or(0);
        let os = std::fs::read_to_string("/etc/os-release")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        HostInfo {
            hostname: hostname(),
            cpu_model,
            cores: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_bytes,
            os,
            kernel: read_trimmed("/proc/sys/kernel/osrelease"),
            file_system: file_system_of(data_dir).unwrap_or_default(),
            git_commit: git_commit(source_dir),
        }
    }
}

/// This machine's host name.
pub fn hostname() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The file-system type of the mount that holds `dir`, from `/proc/self/mounts` (longest prefix).
pub fn file_system_of(dir: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _device = fields.next()?;
            let mount_point = fields.next()?.replace("\\040", " ");
            let fs_type = fields.next()?;
            dir.starts_with(&mount_point)
                .then(|| (mount_point.len(), fs_type.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, fs)| fs)
}

/// The git commit of the checkout that holds `dir`, if it is one; with uncommitted changes to
/// tracked files, `-dirty-` and a digest of them (`0123abcd4567-dirty-89ab01cd`), so that two
/// runs of different uncommitted code never pass for runs of the same source (the earlier runs a
/// verdict pools with are matched on it, `output::earlier`).
pub fn git_commit(dir: &Path) -> Option<String> {
    let commit = git(dir, &["rev-parse", "--short=12", "HEAD"])?;
    let commit = String::from_utf8_lossy(&commit).trim().to_string();
    if commit.is_empty() {
        return None;
    }
    match git(dir, &["diff", "HEAD", "--no-ext-diff", "--binary"]) {
        Some(diff) if !diff.is_empty() => Some(format!("{commit}-dirty-{:08x}", fnv1a(&diff))),
        _ => Some(commit),
    }
}

/// `git -C dir args…`'s standard output, when it succeeds.
fn git(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// FNV-1a, 32 bits: a digest that is the same in every build (std's hasher is not promised to be).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncommitted_changes_make_another_source() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        git(&["add", "a.rs"]);
        git(&["commit", "-q", "-m", "a"]);
        let clean = git_commit(dir.path()).unwrap();
        assert!(!clean.contains("dirty"), "{clean}");
        std::fs::write(dir.path().join("a.rs"), "fn a() { 1; }\n").unwrap();
        let one = git_commit(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() { 2; }\n").unwrap();
        let two = git_commit(dir.path()).unwrap();
        assert!(one.starts_with(&format!("{clean}-dirty-")), "{one}");
        assert_ne!(one, two, "two uncommitted edits are two sources");
        assert_eq!(
            fnv1a(b"a"),
            0xe40c_292c,
            "FNV-1a's published value for \"a\""
        );
    }

    #[test]
    fn detects_this_machine() {
        let host = HostInfo::detect(Path::new("."), Path::new("."));
        assert!(host.cores >= 1);
        assert!(host.memory_bytes > 0, "MemTotal read from /proc/meminfo");
        assert!(!host.kernel.is_empty());
        assert!(!host.file_system.is_empty(), "the mount of `.` has a type");
    }
}
