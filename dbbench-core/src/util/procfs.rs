//! This machine's processes as Linux's `/proc` shows them: a process's name, parent and CPU
//! ticks, its children, and the CPU ticks of a whole process tree (the busy-machine guard counts
//! dbbench's own tree and a local server's apart from the neighbours'), and the processes that
//! work in a directory (what still runs of a managed server, `owned_dir`).
//!
//! Reads go through a [`ProcFs`] rooted at `/proc`, or in tests at a directory laid out like it,
//! so the tree walks can be checked against a listing with known answers. Nothing here fails:
//! a process that ended between two reads, or a file that cannot be read, is simply not there.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where process files are read from.
#[derive(Debug, Clone)]
pub struct ProcFs {
    root: PathBuf,
}

/// What a process's `stat` file says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessStat {
    /// The command name (`postgres`, `sqlservr`), at most 15 bytes as the kernel keeps it.
    pub comm: String,
    /// The parent's pid.
    pub ppid: u32,
    /// User and system CPU ticks, with those of its reaped children.
    pub ticks: u64,
}

impl ProcFs {
    /// This machine's `/proc`.
    pub fn system() -> ProcFs {
        ProcFs::at("/proc")
    }

    /// A directory laid out like `/proc` (`<pid>/stat`, `<pid>/task/<tid>/children`).
    pub fn at(root: impl Into<PathBuf>) -> ProcFs {
        ProcFs { root: root.into() }
    }

    /// The `stat` of `pid`, if it exists.
    pub fn stat(&self, pid: u32) -> Option<ProcessStat> {
        let text = std::fs::read_to_string(self.root.join(pid.to_string()).join("stat")).ok()?;
        parse_stat(&text)
    }

    /// The live children of `pid`, from the `children` file of each of its threads (a child is
    /// listed under the thread that started it).
    pub fn children(&self, pid: u32) -> Vec<u32> {
        let Ok(tasks) = std::fs::read_dir(self.root.join(pid.to_string()).join("task")) else {
            return Vec::new();
        };
        let mut children = Vec::new();
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                children.extend(
                    text.split_whitespace()
                        .filter_map(|c| c.parse::<u32>().ok()),
                );
            }
        }
        children
    }

    /// Every live process under `root`, itself excluded.
    pub fn descendants(&self, root: u32) -> Vec<u32> {
        let mut found = Vec::new();
        let mut seen = HashSet::from([root]);
        let mut pending = self.children(root);
        while let Some(pid) = pending.pop() {
            if seen.insert(pid) {
                found.push(pid);
                pending.extend(self.children(pid));
            }
        }
        found.sort_unstable();
        found
    }

    /// The processes whose working directory is `dir` (a server's processes work in its data
    /// directory, so these are what still runs of a server whose parent is gone). Empty when
    /// `dir` does not exist.
    pub fn working_in(&self, dir: &Path) -> Vec<u32> {
        let Ok(target) = std::fs::canonicalize(dir) else {
            return Vec::new();
        };
        std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_link(self.root.join(pid.to_string()).join("cwd"))
                    .is_ok_and(|cwd| cwd == target)
            })
            .collect()
    }

    /// Whether `pid`'s working directory is `dir` (the same test as [`ProcFs::working_in`]).
    pub fn works_in(&self, pid: u32, dir: &Path) -> bool {
        let Ok(target) = std::fs::canonicalize(dir) else {
            return false;
        };
        std::fs::read_link(self.root.join(pid.to_string()).join("cwd")).is_ok_and(|c| c == target)
    }

    /// The parents of `pid`, its parent first, up to the process with none (init's parent is 0,
    /// which is not listed); bounded, so a listing with a loop in it ends.
    pub fn ancestors(&self, pid: u32) -> Vec<u32> {
        let mut found = Vec::new();
        let mut at = pid;
        while let Some(stat) = self.stat(at) {
            if stat.ppid == 0 || found.contains(&stat.ppid) || found.len() >= 4096 {
                break;
            }
            found.push(stat.ppid);
            at = stat.ppid;
        }
        found
    }

    /// The uid a process runs as (the owner of its `/proc` directory), if it exists.
    pub fn uid(&self, pid: u32) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(self.root.join(pid.to_string()))
            .ok()
            .map(|m| m.uid())
    }

    /// The CPU ticks of the trees under `roots` (each process with its reaped children's),
    /// leaving out every process in `seen` and adding those it counts, so two trees that share
    /// processes count them once. `None` when no root was counted here: none exists, or each
    /// was counted already (a server dbbench started itself is its own work).
    pub fn tree_ticks(&self, roots: &[u32], seen: &mut HashSet<u32>) -> Option<u64> {
        let mut pending: Vec<u32> = roots.to_vec();
        let mut total = 0u64;
        let mut found_root = false;
        while let Some(pid) = pending.pop() {
            if seen.contains(&pid) {
                continue;
            }
            // A process may end between two reads: once reaped its ticks move to its parent's
            // reaped children's, and it is no longer there to count.
            let Some(stat) = self.stat(pid) else {
                continue;
            };
            seen.insert(pid);
            found_root |= roots.contains(&pid);
            total += stat.ticks;
            pending.extend(self.children(pid));
        }
        found_root.then_some(total)
    }
}

/// Parses a `stat` line. The command name (field 2) may hold spaces and parentheses, so fields
/// are counted after its last `)`: state, ppid (4) … utime (14), stime, cutime, cstime (17).
pub fn parse_stat(text: &str) -> Option<ProcessStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let f: Vec<&str> = text[close + 1..].split_whitespace().collect();
    let ppid = f.get(1)?.parse().ok()?;
    let ticks = f
        .get(11..15)?
        .iter()
        .map(|v| v.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(ProcessStat { comm, ppid, ticks })
}

/// A directory laid out like `/proc`, for tests: `(pid, ppid, comm, ticks)` per process, each
/// listed among its parent's children (on the parent's first thread).
#[cfg(test)]
pub(crate) fn fake(dir: &std::path::Path, processes: &[(u32, u32, &str, u64)]) -> ProcFs {
    for &(pid, ppid, comm, ticks) in processes {
        let task = dir.join(format!("{pid}/task/{pid}"));
        std::fs::create_dir_all(&task).unwrap();
        std::fs::write(
            dir.join(format!("{pid}/stat")),
            format!("{pid} ({comm}) S {ppid} {pid} {pid} 0 -1 4194560 0 0 0 0 {ticks} 0 0 0 20 0 1 0 100 0 0"),
        )
        .unwrap();
        let children: Vec<String> = processes
            .iter()
            .filter(|p| p.1 == pid)
            .map(|p| p.0.to_string())
            .collect();
        std::fs::write(task.join("children"), children.join(" ")).unwrap();
    }
    ProcFs::at(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line_with_an_awkward_name() {
        let stat = "4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 500 0 0 0 \
                    120 30 7 3 20 0 1 0 100 0 0";
        assert_eq!(
            parse_stat(stat),
            Some(ProcessStat {
                comm: "a (weird) name".into(),
                ppid: 17,
                ticks: 160
            })
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn trees_are_walked_and_shared_processes_counted_once() {
        let dir = tempfile::tempdir().unwrap();
        let fs = fake(
            dir.path(),
            &[
                (1, 0, "init", 1),
                (100, 1, "postgres", 10),
                (101, 100, "postgres", 20),
                (102, 100, "postgres", 30),
                (103, 102, "postgres", 40),
                (200, 1, "dbbench", 500),
            ],
        );
        assert_eq!(fs.descendants(100), [101, 102, 103]);
        assert_eq!(fs.children(1).len(), 2);
        let mut seen = HashSet::new();
        assert_eq!(fs.tree_ticks(&[100], &mut seen), Some(100));
        // Counted already: not counted again, though the root exists.
        assert_eq!(fs.tree_ticks(&[102], &mut seen), None);
        assert_eq!(fs.tree_ticks(&[200, 100], &mut seen), Some(500));
        // A root that does not exist.
        assert_eq!(fs.tree_ticks(&[999], &mut HashSet::new()), None);
    }

    #[test]
    fn the_processes_working_in_a_directory_are_found_by_their_cwd() {
        let proc_dir = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let fs = fake(
            proc_dir.path(),
            &[(10, 1, "postgres", 0), (11, 1, "postgres", 0)],
        );
        // /proc shows a process's cwd resolved, as canonicalize does.
        let resolved = std::fs::canonicalize(data.path()).unwrap();
        std::os::unix::fs::symlink(&resolved, proc_dir.path().join("10/cwd")).unwrap();
        std::os::unix::fs::symlink("/", proc_dir.path().join("11/cwd")).unwrap();
        assert_eq!(fs.working_in(data.path()), [10]);
        assert!(fs.working_in(&data.path().join("missing")).is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spawned_child_is_in_this_process_tree() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let fs = ProcFs::system();
        let me = std::process::id();
        let pid = child.id();
        assert!(fs.descendants(me).contains(&pid));
        let stat = fs.stat(pid).unwrap();
        assert_eq!((stat.comm.as_str(), stat.ppid), ("sleep", me));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(!fs.descendants(me).contains(&pid));
    }
}
